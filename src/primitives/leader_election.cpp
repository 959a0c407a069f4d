#include "deadbolt/leader_election.hpp"
#include "backends/redis/store.hpp"

#include <fmt/format.h>

#include "backends/redis/commands.hpp"
#include "backends/redis/net/subscription.hpp"
#include "backends/redis/replies.hpp"
#include "backends/redis/specs.hpp"
#include "backends/redis/waker.hpp"
#include "core/client_impl.hpp"
#include "core/quorum.hpp"
#include "core/threads.hpp"
#include "core/validity.hpp"
#include "deadbolt/client.hpp"
#include "deadbolt/error.hpp"

namespace deadbolt {
LeaderElection::LeaderElection(std::shared_ptr<detail::ClientImpl> client, std::string name,
                               MutexOptions options)
    : client_(std::move(client)), name_(std::move(name)), options_(std::move(options)) {}

LeaderElection::~LeaderElection() {
    resign();
}

Lease& LeaderElection::campaign(std::string_view value, const AcquireOptions& how) {
    if (leading())
        throw UsageError(
            make_error_code(errc::invalid_argument),
            fmt::format("election '{}': this handle leads already; resign first", name_));
    Lease l = Client(client_).campaign(name_, value, options_, how);
    std::lock_guard lk(m_);
    return term_.emplace(std::move(l));
}

void LeaderElection::proclaim(std::string_view value) {
    detail::validate_leader_value(value).throw_if_error();
    std::string token;
    {
        std::lock_guard lk(m_);
        if (!term_)
            throw LockError(make_error_code(errc::not_owner),
                            fmt::format("election '{}': cannot proclaim, not the leader", name_));
        token = term_->token();
    }
    auto& c = *client_;
    const auto& prefix = c.options.key_prefix;
    std::string key = prefix + name_;
    std::string channel = detail::observe_channel(prefix, name_);
    detail::Reply r;
    // On Redlock, proclaimed once a majority took the value.
    redis(c)
        .nodes->eval({&detail::proclaim_script(), {key}, {token, value, channel}}, r, c.deadline())
        .throw_if_error();
    if (r.type != detail::Reply::Type::integer || r.integer != 1)
        throw LockError(make_error_code(errc::not_owner),
                        fmt::format("election '{}': cannot proclaim, the term ended (expired or "
                                    "taken over)",
                                    name_));
}

void LeaderElection::resign() noexcept {
    std::optional<Lease> l;
    {
        std::lock_guard lk(m_);
        l.swap(term_);
    }
    // The Lease's destructor resigns and reports a failure through on_lost; never throws.
}

Lease& LeaderElection::term() {
    std::lock_guard lk(m_);
    if (!term_)
        throw LockError(make_error_code(errc::not_owner),
                        fmt::format("election '{}': this handle does not lead", name_));
    return *term_;
}

bool LeaderElection::leading() const noexcept {
    std::lock_guard lk(m_);
    return term_.has_value();
}

namespace {

// Without release messages (Redlock's first node down), how often an observer looks again.
constexpr std::chrono::milliseconds kUnsubscribedRecheck{1000};

// One node's {value, term, pttl} (or {}) as a Leader.
detail::Status parse_leader(const detail::Reply& r, Leader& out) {
    out = {};
    if (r.is_error()) return detail::from_server_error(r.str);
    if (r.type != detail::Reply::Type::array ||
        (!r.elements.empty() &&
         (r.elements.size() != 3 || !detail::to_u64(r.elements[1], out.term))))
        return detail::Status::error(errc::protocol_error, "unexpected leader reply");
    if (r.elements.empty()) return {};
    out.elected = true;
    out.value = r.elements[0].str;
    out.ttl = std::chrono::milliseconds(r.elements[2].integer);
    return {};
}

// The leader now, as leader() tells it, with errors as a Status.
detail::Status read_leader(detail::ClientImpl& c, const std::string& name, Leader& out) {
    std::string key = c.options.key_prefix + name;
    detail::ScriptCall call{&detail::leader_read_script(), {key}, {}};
    if (redis(c).nodes->redlock()) {
        // Each node knows only its own copy: the leader is the one a majority agrees on.
        auto results = redis(c).nodes->everywhere({&call, 1}, c.deadline());
        if (auto st = redis(c).nodes->need_majority(results,
                                                    ": check that the nodes are up and reachable");
            !st.ok())
            return st;
        std::vector<Leader> seen;
        for (const auto& r : results) {
            Leader one;
            if (r.status.ok() && parse_leader(r.replies.front(), one).ok())
                seen.push_back(std::move(one));
        }
        out = detail::majority_leader(seen, static_cast<int>(redis(c).nodes->size()));
        return {};
    }
    detail::Reply r;
    if (auto st = redis(c).server->eval(call, r, c.deadline()); !st.ok()) return st;
    return parse_leader(r, out);
}

}  // namespace

Leader LeaderElection::leader() const {
    Leader out;
    read_leader(*client_, name_, out).throw_if_error();
    return out;
}

Leader LeaderElection::observe(const Leader& seen, const AcquireOptions& how) const {
    Leader now;
    // A leader that dies without resigning publishes nothing: the watch wakes at its expiry.
    auto look = [&](detail::Look& found) {
        auto st = read_leader(*client_, name_, now);
        found.done = st.ok() && !now.same_as(seen);
        found.ttl = now.elected && now.ttl.count() >= 0 ? now.ttl : std::chrono::milliseconds(-1);
        return st;
    };
    detail::watch_channels(*client_, {detail::observe_channel(client_->options.key_prefix, name_)},
                           look, how, kUnsubscribedRecheck);
    return now;
}

}  // namespace deadbolt
