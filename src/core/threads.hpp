// Ending a background thread whose owner may die on that very thread.
#pragma once

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

}  // namespace deadbolt::detail
