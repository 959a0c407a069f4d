// Checker: the properties a lock promises, decided from a recorded history alone. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "history.hpp"

namespace deadbolt::torture {

/// One worker's holding: from acquire_ok until its release was invoked or its validity ran
/// out, whichever came first (a holder may not trust its lease past valid_until).
struct Interval {
    int worker;
    std::int64_t begin, end;
    std::uint64_t fence;
};

struct Verdict {
    std::int64_t acquisitions = 0;       // acquire_ok events
    std::int64_t failed = 0;             // acquire_fail events
    std::int64_t unknown = 0;            // acquire_unknown events
    std::int64_t overlaps = 0;           // holdings that began while `capacity` others were valid
    std::int64_t peak_holders = 0;       // most holdings valid at once
    std::int64_t late_grants = 0;        // acquire_ok recorded after its validity had ended
    std::int64_t fence_regressions = 0;  // grants not above one answered before they were sent
    std::int64_t stale_writes = 0;       // accepted fenced writes below an earlier accepted fence
    std::int64_t accepted_writes = 0;
    std::int64_t lost_updates = 0;         // accepted_writes - final register value
    std::int64_t max_gap_ns = 0;           // longest time without any holder
    std::int64_t last_acquisition_ns = 0;  // with the run's end: a lock stuck for good
    std::vector<std::string> examples;     // a few violations, spelled out
};

/// Holding intervals, in order of their start.
std::vector<Interval> holdings(const std::vector<Event>& history);

/// Checks a whole history; final_register is the register's value after the run.
/// fenced: whether writes carried fences (stale_writes is only meaningful then). capacity: how
/// many holders the lock admits at once (a semaphore's permits; 1 for a lock).
Verdict check(std::vector<Event> history, std::int64_t final_register, bool fenced,
              int capacity = 1);

}  // namespace deadbolt::torture
