// Python's seconds (floats) as deadbolt's durations and deadlines, with the errors of bad ones.
#pragma once

#include <chrono>
#include <optional>
#include <stop_token>

#include "deadbolt/acquire_options.hpp"

namespace deadbolt::python {

/// seconds as whole milliseconds (rounded up, so 0.0001 is 1 ms, not 0). Throws UsageError
/// naming what for NaN, infinity, a negative value or one beyond 30 days' worth of years.
std::chrono::milliseconds to_ms(double seconds, const char* what);

/// The deadline timeout seconds from now: nullopt (wait as long as it takes) for none, now
/// (try once) for 0. Throws UsageError as to_ms does.
std::optional<std::chrono::steady_clock::time_point> deadline_in(std::optional<double> timeout);

/// A wait until deadline (none: as long as it takes) that token ends early.
AcquireOptions waiting(std::optional<std::chrono::steady_clock::time_point> deadline,
                       std::stop_token token = {});

/// d in seconds, as Python shows every time. Never throws.
inline double seconds_of(std::chrono::milliseconds d) {
    return static_cast<double>(d.count()) / 1000;
}

}  // namespace deadbolt::python
