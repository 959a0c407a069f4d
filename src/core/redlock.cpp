#include "core/redlock.hpp"

#include <fmt/format.h>

#include "core/backoff.hpp"
#include "core/client_impl.hpp"
#include "core/quorum.hpp"
#include "core/validity.hpp"
#include "redis/scripts.hpp"

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
// unknown); a node that does not answer now gets it in the background.
void release_on(ClientImpl& c, const AcquireSpec& spec, std::string_view token,
                std::chrono::milliseconds px, Clock::time_point give_up,
                const std::vector<std::size_t>& nodes) {
    if (nodes.empty()) return;
    auto call = lease_call(*spec.kind->release, spec.op_keys, std::string(token), spec.channel, px,
                           spec.op_args);
    auto view = call.view();
    auto results = c.nodes->everywhere({&view, 1}, c.deadline(), nodes);
    for (std::size_t k = 0; k < results.size(); ++k)
        if (!results[k].status.ok()) c.renewer->add_cleanup(call, give_up, nodes[k]);
}

}  // namespace

Status redlock_supports(const AcquireSpec& spec) {
    if (spec.script == &acquire_script()) return {};
    std::string_view why = "it is not implemented for Redlock yet; use a redis:// URL";
    auto name = spec.script ? spec.script->name : std::string_view{};
    if (name == "fair_acquire")
        why = "a FIFO queue cannot be kept in one order on independent nodes";
    else if (name == "semaphore_acquire" || name == "read_acquire")
        why =
            "counts kept on independent nodes do not add up: with N permits, N + 1 holders "
            "can each hold a majority of nodes";
    return Status::error(errc::invalid_argument,
                         fmt::format("'{}' cannot be acquired over redlock://: {} (Redlock "
                                     "supports Mutex: lock, try_lock, acquire)",
                                     spec.name, why));
}

Status redlock_attempt(ClientImpl& c, const AcquireSpec& spec, const ScriptCall& call,
                       std::chrono::milliseconds px, Clock::time_point sent_at,
                       AttemptOutcome& out) {
    Nodes& nodes = *c.nodes;
    const int n = static_cast<int>(nodes.size());
    const auto quorum = static_cast<std::size_t>(majority(n));
    const auto valid_until = validity_deadline(sent_at, spec.options.ttl);
    const auto per_node = node_timeout(spec.options.ttl, c.ep.options.command_timeout);

    auto round1 = nodes.everywhere({&call, 1}, Clock::now() + per_node);
    std::vector<std::size_t> granted;
    std::vector<std::uint64_t> counters;
    std::vector<std::chrono::milliseconds> refusals;
    std::size_t answered = 0;
    std::vector<std::size_t> maybe_ours;  // granted, or the answer is unknown: release there
    Status hard;                          // an answer no retry can change (a wrong-typed key)
    for (std::size_t i = 0; i < round1.size(); ++i) {
        const auto& r = round1[i];
        if (!r.status.ok()) {
            maybe_ours.push_back(i);
            continue;
        }
        AttemptOutcome o;
        const Reply& reply = r.replies.front();
        Status st = reply.is_error() ? from_server_error(reply.str) : parse_acquire(reply, o);
        if (!st.ok()) {
            if (!is_retryable(st.ec) && hard.ok()) hard = st;
            continue;  // LOADING, BUSY, ...: no vote this time
        }
        ++answered;
        if (o.acquired) {
            granted.push_back(i);
            maybe_ours.push_back(i);
            counters.push_back(o.fence);
        } else {
            refusals.push_back(o.pttl);
        }
    }

    if (hard.ok() && granted.size() >= quorum && c.now() < valid_until) {
        if (!nodes.fencing()) {
            out.acquired = true;  // fencing=0: no fence round, no fence
            return {};
        }
        // Round 2: a fence above every counter we saw, written where our key still stands.
        std::uint64_t fence = redlock_fence(counters, 0);
        std::string fence_s = std::to_string(fence);
        ScriptCall raise{&raise_fence_script(),
                         {call.keys[0], call.keys[1]},
                         {call.args[0], fence_s, call.args[2]}};
        auto round2 = nodes.everywhere({&raise, 1}, Clock::now() + per_node, granted);
        std::size_t raised = 0;
        for (const auto& r : round2)
            if (r.status.ok() && r.replies.front().type == Reply::Type::integer &&
                r.replies.front().integer == 1)
                ++raised;
        if (raised >= quorum && c.now() < valid_until) {
            out.acquired = true;
            out.fence = fence;
            return {};
        }
    }

    // A node that refused holds nothing of ours: under contention most attempts end here, and
    // they cost no second round.
    release_on(c, spec, call.args[0], px, sent_at + px, maybe_ours);
    if (!hard.ok()) return hard;
    if (answered < quorum)
        return Status::error(errc::no_quorum, nodes.describe_failures(round1, answered) +
                                                  ": check that the nodes are up and reachable");
    out.acquired = false;
    int free_nodes = static_cast<int>(answered - refusals.size());
    out.pttl = redlock_wait(refusals, free_nodes, n);
    // A majority was free but the attempt still failed: contenders split the vote, or a round
    // ran out of validity. Try again soon, at a random moment.
    if (out.pttl.count() == 0) out.pttl = split_vote_delay();
    return {};
}

}  // namespace deadbolt::detail
