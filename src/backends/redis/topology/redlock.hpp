// Redlock: one acquisition attempt over N independent masters. The algorithm as published
// (every node at once, a per-node timeout far below the TTL, a majority, validity measured
// from before the first send, every key released after a failure) plus the second round of
// DESIGN section 6, which makes fences order every successful acquisition (skipped where the
// nodes agreed on the fence round 1 proposed: ARCHITECTURE 64).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "backends/redis/commands.hpp"
#include "backends/redis/replies.hpp"
#include "backends/redis/specs.hpp"

namespace deadbolt::detail {

struct ClientImpl;
class Nodes;

/// What Redlock offers, for messages that refuse something else.
inline constexpr std::string_view kRedlockOffers =
    "Redlock offers Mutex, ReentrantMutex, RWLock, MultiLock and LeaderElection";

/// Why Redlock does not offer primitive ("FairMutex", "Semaphore", "CountDownLatch", ...);
/// empty when it does.
std::string_view redlock_why_not(std::string_view primitive);

/// Ok when spec can run over Redlock; otherwise invalid_argument saying why not.
Status redlock_supports(const LockSpec& spec);

/// The fence_px argument of spec's round 1 on nodes: with the fence this client proposes
/// (`fence_px@proposal`, ARCHITECTURE 64) where the nodes may agree on it in that round.
std::string redlock_fence_px(const Nodes& nodes, const RedisSpec& spec, std::string fence_px);

/// One attempt of call (spec's acquire script, ARGV {token, px, fence_px}) on every node.
/// Granted on a majority within validity, then, unless a majority took the fence round 1
/// proposed (redlock_fence_px), its fence raised on a majority within validity: out.acquired
/// with that fence (with fencing=0, no fence round and fence 0). Otherwise nothing is
/// kept: every key the attempt may have set is released (nodes that did not answer included) and
/// out.pttl says when to try again (the holder's keys' expiry, or a short random delay after a
/// split vote). Fails with no_quorum when fewer than a majority answered, or with a node's error
/// that retrying cannot fix.
/// A round ends as soon as a majority decides it (node-redlock does the same): a node still
/// unanswered then counts as unknown, and the fence is above every counter of the majority
/// heard (so above every agreed fence). Runs on the client's event loop; blocks the caller
/// until done.
Status redlock_attempt(ClientImpl& c, const std::shared_ptr<const RedisSpec>& spec,
                       const ScriptCall& call, std::chrono::milliseconds px,
                       Clock::time_point sent_at, AttemptOutcome& out);

using RedlockDone = std::function<void(Status, AttemptOutcome)>;
/// redlock_attempt on the loop, without blocking: done once, there. It keeps spec (the give-back
/// of a failed attempt's holdings shares it).
void redlock_async_attempt(ClientImpl& c, std::shared_ptr<const RedisSpec> spec,
                           const ScriptCall& call, std::chrono::milliseconds px,
                           Clock::time_point sent_at, RedlockDone done);

}  // namespace deadbolt::detail
