// Sleeping in a way a stop request cuts short.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stop_token>

namespace deadbolt::detail {

/// Sleeps until t, or until cancel is requested (then returns at once).
inline void sleep_until(std::chrono::steady_clock::time_point t, const std::stop_token& cancel) {
    std::mutex m;
    std::condition_variable_any cv;
    std::unique_lock lk(m);
    cv.wait_until(lk, cancel, t, [] { return false; });
}

}  // namespace deadbolt::detail
