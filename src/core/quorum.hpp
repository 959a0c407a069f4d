// Quorum: the arithmetic of Redlock over N independent masters (DESIGN sections 2 and 6).
// Pure; unit-tested without a server.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "net/status.hpp"

namespace deadbolt::detail {

/// Nodes that make a majority of n (n / 2 + 1): two majorities always share a node.
constexpr int majority(int n) {
    return n / 2 + 1;
}

/// Round 2's fence (DESIGN section 6): above every counter round 1 returned and above the
/// server-time floor, so it orders this acquisition after every earlier one on a shared node.
std::uint64_t redlock_fence(const std::vector<std::uint64_t>& counters, std::uint64_t floor_us);

/// How long one node may take to answer: far below the TTL (a tenth of it), never more than
/// command_timeout, at least 1 ms. A slow node must cost a vote, not the lease's validity.
std::chrono::milliseconds node_timeout(std::chrono::milliseconds ttl,
                                       std::chrono::milliseconds command_timeout);

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
