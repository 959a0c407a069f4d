#include "deadbolt/leader_election.hpp"

#include <fmt/format.h>

#include "core/client_impl.hpp"
#include "core/quorum.hpp"
#include "core/threads.hpp"
#include "core/validity.hpp"
#include "deadbolt/client.hpp"
#include "deadbolt/error.hpp"
#include "net/subscription.hpp"
#include "primitives/specs.hpp"
#include "redis/commands.hpp"
#include "redis/replies.hpp"

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
    const auto& prefix = c.ep.options.key_prefix;
    std::string key = prefix + name_;
    std::string channel = detail::observe_channel(prefix, name_);
    detail::Reply r;
    // On Redlock, proclaimed once a majority took the value.
    c.nodes->eval({&detail::proclaim_script(), {key}, {token, value, channel}}, r, c.deadline())
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
Leader parse_leader(const detail::Reply& r) {
    Leader out;
    if (r.type != detail::Reply::Type::array)
        throw ServerError(make_error_code(errc::protocol_error), "unexpected leader reply");
    if (r.elements.empty()) return out;
    if (r.elements.size() != 3 || !detail::to_u64(r.elements[1], out.term))
        throw ServerError(make_error_code(errc::protocol_error), "unexpected leader reply");
    out.elected = true;
    out.value = r.elements[0].str;
    out.ttl = std::chrono::milliseconds(r.elements[2].integer);
    return out;
}

}  // namespace

Leader LeaderElection::leader() const {
    auto& c = *client_;
    std::string key = c.ep.options.key_prefix + name_;
    detail::ScriptCall call{&detail::leader_read_script(), {key}, {}};
    if (c.nodes->redlock()) {
        // Each node knows only its own copy: the leader is the one a majority agrees on.
        auto results = c.nodes->everywhere({&call, 1}, c.deadline());
        c.nodes->need_majority(results, ": check that the nodes are up and reachable")
            .throw_if_error();
        std::vector<Leader> seen;
        for (const auto& r : results)
            if (r.status.ok() && !r.replies.front().is_error())
                seen.push_back(parse_leader(r.replies.front()));
        return detail::majority_leader(seen, static_cast<int>(c.nodes->size()));
    }
    detail::Reply r;
    c.server->eval(call, r, c.deadline()).throw_if_error();
    return parse_leader(r);
}

Leader LeaderElection::observe(const Leader& seen, const AcquireOptions& how) const {
    auto& c = *client_;
    detail::Subscription sub(c.subscriber());
    // Subscribe before looking, so a change between the look and the wait is not missed.
    auto subscribe = [&] {
        auto sub_deadline = clock::now() + c.ep.options.command_timeout;
        if (how.deadline) sub_deadline = std::min(sub_deadline, *how.deadline);
        detail::Status st = sub.subscribe({detail::observe_channel(c.ep.options.key_prefix, name_)},
                                          sub_deadline, how.cancel);
        // Redlock's messages come from its first node: when that one is down the others
        // still elect, so look again now and then instead of failing.
        if (!st.ok() && (!c.nodes->redlock() || st.ec == make_error_code(errc::cancelled)))
            st.throw_if_error();
        return st.ok();
    };
    bool subscribed = subscribe();
    for (;;) {
        Leader now = leader();
        if (!now.same_as(seen) || how.cancel.stop_requested()) return now;
        auto t = clock::now();
        if (how.deadline && t >= *how.deadline) return now;
        // A leader that dies without resigning publishes nothing: wake at its expiry too.
        auto wake = now.elected && now.ttl.count() >= 0 ? t + now.ttl + std::chrono::milliseconds(1)
                                                        : clock::time_point::max();
        if (how.deadline) wake = std::min(wake, *how.deadline);
        if (subscribed) {
            sub.wait(wake);
        } else {
            detail::sleep_until(std::min(wake, t + kUnsubscribedRecheck), how.cancel);
            subscribed = subscribe();
        }
    }
}

}  // namespace deadbolt
