// Handoffs: locks this client just released while other clients waited for them. Its own
// next acquire of such a lock yields for a moment (MutexOptions::handoff_grace), so the woken
// waiter takes it instead of the releaser barging back in ahead of everyone.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace deadbolt::detail {

class Handoffs {
  public:
    using Clock = std::chrono::steady_clock;
    /// key was released to waiters; yield on it until `until`.
    void note(const std::string& key, Clock::time_point until);
    /// Until when to yield on key, if a handoff of it is still fresh.
    std::optional<Clock::time_point> yield_until(const std::string& key);

  private:
    std::mutex m_;
    std::unordered_map<std::string, Clock::time_point> until_;
    // The latest `until` noted, set under m_: most acquisitions follow no fresh handoff, and
    // find that out without the lock and the key's hash.
    std::atomic<Clock::rep> latest_{Clock::time_point::min().time_since_epoch().count()};
};

}  // namespace deadbolt::detail
