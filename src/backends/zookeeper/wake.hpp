// ZkWake: a wake-up that a ZooKeeper watch fires from the C client's thread. Held by
// shared_ptr in the watch's callback, so a watch that fires after its waiter left finds it
// alive.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stop_token>

namespace deadbolt::detail {

struct ZkWake {
    /// Not fired: for the next wait.
    void reset() {
        std::lock_guard lk(m);
        woken = false;
    }
    /// Wakes the waiter, now or at its next wait.
    void fire() {
        std::lock_guard lk(m);
        woken = true;
        cv.notify_all();
    }
    /// Whether it fired since the last reset.
    bool fired() {
        std::lock_guard lk(m);
        return woken;
    }
    /// Until fired, until, or a stop request on cancel.
    void wait(std::chrono::steady_clock::time_point until, const std::stop_token& cancel) {
        std::stop_callback on_cancel(cancel, [this] {  // before the lock: it may run at once
            std::lock_guard lk(m);
            cv.notify_all();
        });
        std::unique_lock lk(m);
        cv.wait_until(lk, until, [&] { return woken || cancel.stop_requested(); });
    }

    std::mutex m;
    std::condition_variable cv;
    bool woken = false;
};

}  // namespace deadbolt::detail
