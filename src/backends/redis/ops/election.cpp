// LeaderElection on Redis: the election hash (leader token, value, term) and a message on
// "<key>:leader" at every change; on Redlock the leader is what a majority of nodes agrees on.
#include "backends/redis/net/status.hpp"
#include "backends/redis/replies.hpp"
#include "backends/redis/scripts.hpp"
#include "backends/redis/specs.hpp"
#include "backends/redis/store.hpp"
#include "backends/redis/waker.hpp"
#include "core/quorum.hpp"

namespace deadbolt::detail {
namespace {

// Without release messages (Redlock's first node down), how often an observer looks again.
constexpr std::chrono::milliseconds kUnarmedRecheck{1000};

// One node's {value, term, pttl} (or {}) as a Leader.
Status parse_leader(const Reply& r, Leader& out) {
    out = {};
    if (r.is_error()) return from_server_error(r.str);
    if (r.type != Reply::Type::array ||
        (!r.elements.empty() && (r.elements.size() != 3 || !to_u64(r.elements[1], out.term))))
        return Status::error(errc::protocol_error, "unexpected leader reply");
    if (r.elements.empty()) return {};
    out.elected = true;
    out.value = r.elements[0].str;
    out.ttl = std::chrono::milliseconds(r.elements[2].integer);
    return {};
}

}  // namespace

Status RedisStore::proclaim(const std::string& name, const std::string& token,
                            std::string_view value, bool& ours) {
    std::string channel = observe_channel(client.options.key_prefix, name);
    Reply r;
    // On Redlock, proclaimed once a majority took the value.
    Status st =
        nodes->eval({&proclaim_script(), {key_of(name)}, {token, value, channel}}, r, deadline());
    ours = st.ok() && r.type == Reply::Type::integer && r.integer == 1;
    return st;
}

Status RedisStore::leader(const std::string& name, Leader& out) {
    return read_leader(name, out, nullptr);
}

Status RedisStore::read_leader(const std::string& name, Leader& out,
                               std::optional<Leader>* messenger) {
    std::string key = key_of(name);
    ScriptCall call{&leader_read_script(), {key}, {}};
    if (nodes->redlock()) {
        // Each node knows only its own copy: the leader is the one a majority agrees on.
        auto results = nodes->everywhere({&call, 1}, deadline());
        if (auto st = nodes->need_majority(results, ": check that the nodes are up and reachable");
            !st.ok())
            return st;
        std::vector<Leader> seen;
        for (std::size_t i = 0; i < results.size(); ++i) {
            Leader one;
            const auto& r = results[i];
            if (!r.status.ok() || !parse_leader(r.replies.front(), one).ok()) continue;
            if (i == 0 && messenger) *messenger = one;
            seen.push_back(std::move(one));
        }
        out = majority_leader(seen, static_cast<int>(nodes->size()));
        return {};
    }
    Reply r;
    if (auto st = server->eval(call, r, deadline()); !st.ok()) return st;
    return parse_leader(r, out);
}

Leader RedisStore::observe(const std::string& name, const Leader& seen, const AcquireOptions& how) {
    Leader now;
    // A leader that dies without resigning publishes nothing: the watch wakes at its expiry.
    auto look = [&](Look& found) {
        std::optional<Leader> messenger;
        auto st = read_leader(name, now, &messenger);
        found.done = st.ok() && !now.same_as(seen);
        found.ttl = now.elected && now.ttl.count() >= 0 ? now.ttl : std::chrono::milliseconds(-1);
        // On Redlock the message comes from the first node only. Once that node is ahead of
        // the majority, it has announced a change the other nodes have yet to apply (a slower
        // link, a script they had to load first), and they announce it only to their own
        // subscribers: the machine looks again soon instead of sleeping until the expiry.
        found.wake_spent = st.ok() && messenger && !messenger->same_as(now);
        return st;
    };
    watch_channels(client, {observe_channel(client.options.key_prefix, name)}, look, how,
                   kUnarmedRecheck);
    return now;
}

}  // namespace deadbolt::detail
