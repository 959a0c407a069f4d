// Slot split: a call whose keys live in several Redis Cluster slots, run as one part per
// slot when its script allows it (Script::per_key: a MultiLock's lease operations), and the
// parts' replies put back together. Pure; unit-tested without a server.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "backends/redis/commands.hpp"
#include "backends/redis/net/resp.hpp"

namespace deadbolt::detail {

/// calls with every per-key call whose keys span slots replaced by one part per slot (keys
/// in their original order within a part, per-key ARGV following its key).
struct SlotSplit {
    std::vector<ScriptCall> calls;
    std::vector<std::size_t> origin;  // calls[j] is a part of the caller's call origin[j]
    bool split = false;               // false: nothing to split (calls and origin empty)
};
SlotSplit split_by_slot(std::span<const ScriptCall> calls);

/// The caller's replies from the parts' (n calls in all): a part's error reply is the call's;
/// else 0 when any part said 0 (a key not ours), else 1 + the sum of each part's count.
std::vector<Reply> merge_parts(const SlotSplit& s, std::vector<Reply> part_replies, std::size_t n);

}  // namespace deadbolt::detail
