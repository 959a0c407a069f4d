// Thread helpers: ending a background thread whose owner may die on that very thread, and
// sleeping in a way a stop request cuts short.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stop_token>
#include <thread>

namespace deadbolt::detail {

/// Joins t, or detaches it when called from t itself: the owner died inside the thread's
/// own work, and the thread holds what it needs alive and returns by itself.
inline void join_or_detach(std::thread t) noexcept {
    if (!t.joinable()) return;
    if (t.get_id() == std::this_thread::get_id())
        t.detach();
    else
        t.join();
}

/// Sleeps until t, or until cancel is requested (then returns at once).
inline void sleep_until(std::chrono::steady_clock::time_point t, const std::stop_token& cancel) {
    std::mutex m;
    std::condition_variable_any cv;
    std::unique_lock lk(m);
    cv.wait_until(lk, cancel, t, [] { return false; });
}

}  // namespace deadbolt::detail
