// CountDownLatch: a count shared across processes; waiters wake when it reaches zero.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>

namespace deadbolt {

namespace detail {
struct ClientImpl;
}

/// A latch (like java.util.concurrent.CountDownLatch, Redisson's RCountDownLatch): set a
/// count once, count it down from anywhere, and every waiter wakes when it reaches zero. It
/// opens exactly once: only the count_down() that reaches zero reports opening it, and later
/// calls change nothing. An unset (or expired) latch is open. Waiters are woken by a
/// publish, never by polling.
class CountDownLatch {
  public:
    using clock = std::chrono::steady_clock;

    /// Sets the count if the latch is not set already (true), else changes nothing (false).
    /// The latch expires (opens) after ttl so nothing leaks. Throws UsageError for count < 1 or
    /// a bad ttl, ConnectionError / ServerError.
    bool try_set_count(std::int64_t count,
                       std::chrono::milliseconds ttl = std::chrono::hours(24)) const;
    /// Counts down by one; true only for the call that opened the latch. Counting down an open
    /// latch does nothing. Throws ConnectionError / ServerError.
    bool count_down() const;
    /// The current count; 0 when open. Throws ConnectionError / ServerError.
    std::int64_t count() const;

    /// Waits until the latch is open. Throws ConnectionError / ServerError.
    void wait() const { wait_until_impl(std::nullopt, {}); }
    /// Waits at most d; true if the latch opened.
    template <class Rep, class Period>
    bool wait_for(const std::chrono::duration<Rep, Period>& d) const {
        return wait_until_impl(clock::now() + std::chrono::ceil<clock::duration>(d), {});
    }
    /// Waits until deadline (none = forever) or until cancel is requested; true if open.
    bool wait_until(std::optional<clock::time_point> deadline,
                    const std::stop_token& cancel) const {
        return wait_until_impl(deadline, cancel);
    }
    const std::string& name() const noexcept { return name_; }

  private:
    friend class Client;
    CountDownLatch(std::shared_ptr<detail::ClientImpl> client, std::string name);
    bool wait_until_impl(std::optional<clock::time_point> deadline,
                         const std::stop_token& cancel) const;

    std::shared_ptr<detail::ClientImpl> client_;
    std::string name_;
};

}  // namespace deadbolt
