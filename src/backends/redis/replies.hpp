// Replies: script results turned into outcomes. Pure; unit-tested without a server.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/redis/net/resp.hpp"
#include "backends/redis/net/status.hpp"

namespace deadbolt::detail {

struct AttemptOutcome {
    bool acquired = false;
    std::uint64_t fence = 0;            // when acquired
    bool again = false;                 // when acquired: a re-entry of a holding (same fence)
    std::vector<std::uint64_t> fences;  // when acquired with one fence per name (MultiLock)
    std::chrono::milliseconds pttl{0};  // when held by another; -1 = no expiry
    bool cleanup_pending = false;       // Redlock: this attempt's release still runs in the
                                        // background (a node did not answer)
    std::string ticket;                 // refused, having lined up: its place in the line
    bool wake_spent = false;            // refused on Redlock, yet the message node was free
};

/// An acquire script's {1, fence} (or {1, fence per name...}), {2, fence} for a re-entry, or
/// {0, pttl} ({0, pttl, ticket} when it lined up); fence 0 is accepted
/// only when !fenced (a shared holding).
Status parse_acquire(const Reply& r, AttemptOutcome& out, bool fenced = true);
/// {1|0, fence} of fenced_set.
Status parse_fenced(const Reply& r, bool& accepted, std::uint64_t& highest, std::uint64_t& version);
/// A decimal string or integer reply as uint64 (fences); false if neither.
bool to_u64(const Reply& r, std::uint64_t& out);

}  // namespace deadbolt::detail
