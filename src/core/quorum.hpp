// Quorum: the arithmetic of Redlock over N independent masters (DESIGN sections 2 and 6).
// Pure; unit-tested without a server.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.hpp"
#include "deadbolt/leader_election.hpp"
#include "deadbolt/lock_status.hpp"

namespace deadbolt::detail {

/// Nodes that make a majority of n (n / 2 + 1): two majorities always share a node.
constexpr int majority(int n) {
    return n / 2 + 1;
}

/// Round 2's fence (DESIGN section 6): above every counter round 1 returned and above the
/// server-time floor, so it orders this acquisition after every earlier one on a shared node.
std::uint64_t redlock_fence(const std::vector<std::uint64_t>& counters, std::uint64_t floor_us);

/// A fence agreed in round 1 itself: the highest counter, when at least `quorum` granting
/// nodes hold exactly it (they took the proposed fence), so round 2 has nothing to raise there.
/// Every later majority shares one of those nodes, whose counter orders it after this one.
/// Nothing when they differ (a node was ahead of the proposal): round 2 decides then.
std::optional<std::uint64_t> agreed_in_round1(const std::vector<std::uint64_t>& counters,
                                              std::size_t quorum);

/// How long one node may take to answer: far below the TTL (a tenth of it), never more than
/// command_timeout, at least 1 ms. A slow node must cost a vote, not the lease's validity.
std::chrono::milliseconds node_timeout(std::chrono::milliseconds ttl,
                                       std::chrono::milliseconds command_timeout);

/// How one lease script's per-node answers decide (extend, release, check): yes once a
/// majority said yes, no once a majority can no longer say yes, else undecided (too few nodes
/// answered: nothing is known, try again).
enum class Tally { yes, no, undecided };
Tally tally(int yes, int no, int n);

/// How long a failed attempt should sleep before the next: until enough of the other holder's
/// keys expire (refusals: their remaining TTLs in ms, -1 = no expiry) that, with the free_nodes
/// that granted or were free, a majority of n could be ours. 0 when a majority is free
/// already; -1 when that takes a key with no expiry. Nodes that did not answer are not
/// counted free, so with too many of them this is the longest refusal.
std::chrono::milliseconds redlock_wait(std::vector<std::chrono::milliseconds> refusals,
                                       int free_nodes, int n);

/// A Redlock lock's status from the nodes that answered (n in all): held when a majority of
/// n hold it, until enough of their keys expire that fewer than a majority do; the highest
/// fence any node saw; the holder as the node with that fence names it. Per-node detail
/// (waiters, permits) does not apply.
LockStatus majority_status(const std::vector<LockStatus>& answered, int n);

/// An election's leader from the nodes that answered (n in all): the leader whose term a
/// majority of n agree on (round 2 wrote it there), until enough of their keys expire; its
/// value as most of those nodes have it. Nobody leads when no term has a majority (also
/// while a campaign's fence round is under way).
Leader majority_leader(const std::vector<Leader>& answered, int n);

/// A node's role from the text of INFO replication.
struct NodeRole {
    bool master = false;
    std::string master_host;  // when a replica: whom it copies
    std::string master_port;
};
NodeRole parse_role(std::string_view info);

/// What a Redlock node set looks like before it is used.
struct NodeSetCheck {
    Status status;        ///< invalid_argument when the set weakens the algorithm.
    std::string warning;  ///< Non-empty for a legal but wasteful set (an even count).
};

/// addresses: each node as "ip:port" after name resolution. Refuses fewer than 3 nodes
/// unless allow_fewer (one crash would then stop every lock), and a node listed twice (its
/// vote would count twice); warns on an even count (it tolerates no more failures than one
/// node fewer).
NodeSetCheck check_node_set(const std::vector<std::string>& addresses, bool allow_fewer);

}  // namespace deadbolt::detail
