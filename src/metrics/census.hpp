// What the exporter saw of an engine's locks at its last listing, and the OpenMetrics text of
// it (pure of I/O: the exporter lists, this counts).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "deadbolt/lock_status.hpp"

namespace deadbolt::detail {

struct Census {
    std::string engine;                      // the engine label
    std::vector<std::string> name_patterns;  // names count under the first they match, or "other"
    std::vector<ListedLock> locks;           // the last listing that succeeded
    std::chrono::system_clock::time_point listed_at{};  // when it was made
    bool up = false;                                    // the last listing succeeded
    double listing_seconds = 0;                         // how long the last listing took
    std::uint64_t listings = 0;  // listings made (each costs the engine; scrapes may share one)
    std::uint64_t errors = 0;    // listings that failed
    std::uint64_t scrapes = 0;   // texts made
};

/// The families of deadbolt_locks, deadbolt_lock_holders, deadbolt_lock_waiters,
/// deadbolt_lock_oldest_holding_seconds, deadbolt_lock_fence_max and deadbolt_exporter_*,
/// ending with "# EOF".
std::string census_text(const Census& c);

}  // namespace deadbolt::detail
