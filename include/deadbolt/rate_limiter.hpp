// RateLimiter: a token bucket shared by every client of one name.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "deadbolt/acquire_options.hpp"

namespace deadbolt {

namespace detail {
struct ClientImpl;
}

/// A bucket's shape: it refills at `rate` tokens every `per` and holds at most `burst`.
struct RateLimit {
    std::int64_t rate = 1;                ///< Tokens added every `per` (>= 1).
    std::chrono::milliseconds per{1000};  ///< The refill period (1 ms to 1 year).
    std::int64_t burst = 1;               ///< Capacity: the most taken at once after a lull.
};

/// The answer to one try_acquire().
struct RateDecision {
    bool allowed = false;                   ///< The tokens were taken.
    std::chrono::milliseconds retry_in{0};  ///< When not allowed: until enough have refilled.
    std::int64_t remaining = 0;             ///< Whole tokens left in the bucket after the call.
};

/// A token bucket kept on the server and shared by every client of the name: each call
/// refills it by the time elapsed on the server's clock (so client clocks do not matter) and
/// takes tokens atomically, so the clients together never exceed `burst` at once or `rate`
/// per `per` on average. A full bucket is the same as no key: the key expires once refilled.
/// Every user of a name must give the same RateLimit (else invalid_argument).
class RateLimiter {
  public:
    using clock = std::chrono::steady_clock;

    /// Takes n tokens if the bucket has them, else says how long until it will. Throws
    /// UsageError for n < 1 or n > burst (never satisfiable), or for a RateLimit other than the
    /// one this name is used with; ServerError(wrong_type) for a key that is not a bucket;
    /// ConnectionError.
    RateDecision try_acquire(std::int64_t n = 1) const;
    /// Waits until n tokens are taken, sleeping exactly the time the server says is missing
    /// (no polling). Throws as try_acquire().
    void acquire(std::int64_t n = 1) const { acquire(n, AcquireOptions{}); }
    /// Waits at most d; false at once when the bucket cannot refill in time (tokens only come
    /// back with time, so waiting could not help). Throws as try_acquire().
    template <class Rep, class Period>
    bool try_acquire_for(std::int64_t n, const std::chrono::duration<Rep, Period>& d) const {
        AcquireOptions how;
        how.deadline = clock::now() + std::chrono::ceil<clock::duration>(d);
        return acquire(n, how);
    }
    /// Waits as how says: false when how.deadline passes or cannot be met (as above);
    /// LockError(cancelled) when how.cancel is requested meanwhile; on_wait gets the time
    /// until the tokens refill as holder_ttl. Throws as try_acquire().
    bool acquire(std::int64_t n, const AcquireOptions& how) const;
    /// Whole tokens in the bucket now (a snapshot). Throws as try_acquire().
    std::int64_t available() const;

    const std::string& name() const noexcept { return name_; }
    const RateLimit& limit() const noexcept { return limit_; }

  private:
    friend class Client;
    /// limit already checked (Client::rate_limiter does).
    RateLimiter(std::shared_ptr<detail::ClientImpl> client, std::string name, RateLimit limit);
    RateDecision call(std::int64_t n) const;

    std::shared_ptr<detail::ClientImpl> client_;
    std::string name_;
    RateLimit limit_;
};

}  // namespace deadbolt
