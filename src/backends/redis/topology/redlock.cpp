#include "backends/redis/topology/redlock.hpp"
#include "backends/redis/store.hpp"

#include <fmt/format.h>

#include <map>

#include "backends/redis/holding.hpp"
#include "backends/redis/scripts.hpp"
#include "core/backoff.hpp"
#include "core/client_impl.hpp"
#include "core/quorum.hpp"
#include "core/validity.hpp"

namespace deadbolt::detail {
namespace {

// After a split vote every contender backs off for a random while, so one of them can win the
// next round instead of all splitting again.
constexpr std::chrono::milliseconds kSplitVoteMin{5};
constexpr std::chrono::milliseconds kSplitVoteSpread{45};

std::chrono::milliseconds split_vote_delay() {
    return kSplitVoteMin + random_jitter(kSplitVoteSpread);
}

// Gives back what the attempt may hold on `nodes` (those that granted, or whose answer is
// unknown); a node that does not answer now gets it in the background. True when it did.
bool release_on(ClientImpl& c, const RedisSpec& spec, std::string_view token,
                std::chrono::milliseconds px, Clock::time_point give_up,
                const std::vector<std::size_t>& nodes) {
    if (nodes.empty()) return false;
    auto call = lease_call(*spec.kind->release, spec.op_keys, std::string(token), spec.channel, px,
                           spec.op_args);
    auto view = call.view();
    auto results = redis(c).nodes->everywhere({&view, 1}, c.deadline(), nodes);
    bool later = false;
    for (std::size_t k = 0; k < results.size(); ++k) {
        if (results[k].status.ok()) continue;
        auto one = RedisHolding::held(spec, std::string(token), px);
        one->node = nodes[k];
        c.renewer->add_cleanup(std::move(one), give_up);
        later = true;
    }
    return later;
}

// What round 1 brought back from every node.
struct Round1 {
    std::vector<std::size_t> granted;
    std::vector<std::vector<std::uint64_t>> counters;  // per lock: each grant's counter
    std::size_t reentered = 0;                         // grants that were re-entries
    std::uint64_t reentry_fence = 0;                   // the fence those re-entries carry
    std::vector<std::chrono::milliseconds> refusals;
    std::size_t answered = 0;
    std::vector<std::size_t> maybe_ours;  // granted, or the answer is unknown: release there
    Status hard;                          // an answer no retry can change (a wrong-typed key)
};

Round1 tally_round1(const std::vector<NodeReplies>& replies, std::size_t locks, bool fenced) {
    Round1 r;
    r.counters.resize(locks);
    for (std::size_t i = 0; i < replies.size(); ++i) {
        if (!replies[i].status.ok()) {
            r.maybe_ours.push_back(i);
            continue;
        }
        AttemptOutcome o;
        const Reply& reply = replies[i].replies.front();
        Status st =
            reply.is_error() ? from_server_error(reply.str) : parse_acquire(reply, o, fenced);
        if (!st.ok()) {
            if (!is_retryable(st.ec) && r.hard.ok()) r.hard = st;
            continue;  // LOADING, BUSY, ...: no vote this time
        }
        ++r.answered;
        if (!o.acquired) {
            r.refusals.push_back(o.pttl);
            continue;
        }
        r.granted.push_back(i);
        r.maybe_ours.push_back(i);
        if (o.fences.empty()) o.fences.push_back(o.fence);
        for (std::size_t k = 0; k < locks && k < o.fences.size(); ++k)
            r.counters[k].push_back(o.fences[k]);
        if (o.again) {
            ++r.reentered;
            r.reentry_fence = std::max(r.reentry_fence, o.fence);
        }
    }
    return r;
}

// Round 2 on the nodes that granted: one fence per lock above every counter seen for it,
// written where the holding still stands. Returns the fences when a majority took them.
bool raise_fences(ClientImpl& c, const RedisSpec& spec, const ScriptCall& call, const Round1& r1,
                  Clock::time_point deadline, std::vector<std::uint64_t>& fences) {
    const std::size_t locks = r1.counters.size();
    std::vector<std::string> fence_s;
    for (const auto& counters : r1.counters) {
        fences.push_back(redlock_fence(counters, 0));
        fence_s.push_back(std::to_string(fences.back()));
    }
    std::string_view notify;  // an election tells observers once its term is agreed
    if (spec.kind->held_as == "leader") notify = spec.op_args.front();
    ScriptCall raise{
        &raise_fence_script(),
        {call.keys.begin(), call.keys.begin() + static_cast<std::ptrdiff_t>(2 * locks)},
        {call.args[0], call.args[2], spec.kind->held_as, notify}};
    for (const auto& f : fence_s) raise.args.push_back(f);
    auto round2 = redis(c).nodes->everywhere({&raise, 1}, deadline, r1.granted);
    std::size_t raised = 0;
    for (const auto& r : round2)
        if (r.status.ok() && r.replies.front().type == Reply::Type::integer &&
            r.replies.front().integer == 1)
            ++raised;
    return raised >= static_cast<std::size_t>(majority(static_cast<int>(redis(c).nodes->size())));
}

}  // namespace

std::string_view redlock_why_not(std::string_view primitive) {
    // Redlock keeps one promise: a majority of independent nodes agrees on one holder. What
    // needs more than that is refused, with the reason.
    static const std::map<std::string_view, std::string_view> kWhyNot{
        {"FairMutex", "a FIFO queue cannot be kept in one order on independent nodes"},
        {"Semaphore",
         "permits counted on independent nodes do not add up: with N permits, N + 1 holders can "
         "each hold a majority"},
        {"PermitExpirableSemaphore",
         "permits counted on independent nodes do not add up: with N permits, N + 1 holders can "
         "each hold a majority"},
        {"RateLimiter",
         "a token bucket on independent nodes either multiplies the rate or needs every node to "
         "answer"},
        {"CountDownLatch",
         "a count kept on independent nodes diverges when a node misses a count_down"},
        {"force_unlock", "a majority of independent nodes would have to agree on an eviction"},
    };
    auto why = kWhyNot.find(primitive);
    return why == kWhyNot.end() ? std::string_view{} : why->second;
}

Status redlock_supports(const LockSpec& spec) {
    std::string_view why = spec.shape == Shape::fair      ? redlock_why_not("FairMutex")
                           : spec.shape == Shape::permits ? redlock_why_not("Semaphore")
                                                          : std::string_view{};
    if (why.empty()) return {};
    return Status::error(errc::invalid_argument,
                         fmt::format("'{}' cannot be acquired over redlock://: {} ({})", spec.name,
                                     why, kRedlockOffers));
}

Status redlock_attempt(ClientImpl& c, const RedisSpec& spec, const ScriptCall& call,
                       std::chrono::milliseconds px, Clock::time_point sent_at,
                       AttemptOutcome& out) {
    Nodes& nodes = *redis(c).nodes;
    const int n = static_cast<int>(nodes.size());
    const auto quorum = static_cast<std::size_t>(majority(n));
    const auto valid_until = validity_deadline(sent_at, spec.options.ttl);
    const auto per_node = node_timeout(spec.options.ttl, c.options.command_timeout);
    const std::size_t locks = spec.names.empty() ? 1 : spec.names.size();

    auto round1 = nodes.everywhere({&call, 1}, Clock::now() + per_node);
    auto r1 = tally_round1(round1, locks, spec.fenced);
    if (r1.hard.ok() && r1.granted.size() >= quorum && c.now() < valid_until) {
        if (!nodes.fencing() || !spec.fenced) {
            out.acquired = true;  // no fence round, no fence (fencing=0, or a shared holding)
            return {};
        }
        if (spec.reentry && r1.reentered >= quorum) {
            // A majority already fenced this holding: a re-entry keeps its fence. Only when
            // the caller holds it: a stale grant of the same owner (a failed attempt's, left
            // to expire) was never fenced by a majority, so it is fenced afresh.
            out.acquired = true;
            out.fence = r1.reentry_fence;
            return {};
        }
        std::vector<std::uint64_t> fences;
        if (raise_fences(c, spec, call, r1, Clock::now() + per_node, fences) &&
            c.now() < valid_until) {
            out.acquired = true;
            out.fence = fences.front();
            if (!spec.names.empty()) out.fences = std::move(fences);
            return {};
        }
    }

    // A node that refused holds nothing of ours: under contention most attempts end here, and
    // they cost no second round.
    // A fixed owner (ReentrantMutex) gives back only the grants it saw: a release sent
    // where the answer is unknown could take back a count of the owner's other holdings
    // if the request never ran. Such grants expire by themselves.
    out.cleanup_pending = release_on(c, spec, call.args[0], px, sent_at + px,
                                     spec.owner.empty() ? r1.maybe_ours : r1.granted);
    if (!r1.hard.ok()) return r1.hard;
    if (r1.answered < quorum)
        return Status::error(errc::no_quorum, nodes.describe_failures(round1, r1.answered) +
                                                  ": check that the nodes are up and reachable");
    out.acquired = false;
    int free_nodes = static_cast<int>(r1.answered - r1.refusals.size());
    out.pttl = redlock_wait(r1.refusals, free_nodes, n);
    // A majority was free but the attempt still failed: contenders split the vote, or a round
    // ran out of validity. Try again soon, at a random moment.
    if (out.pttl.count() == 0) out.pttl = split_vote_delay();
    return {};
}

}  // namespace deadbolt::detail
