#include "deadbolt/rate_limiter.hpp"

#include <fmt/format.h>

#include <condition_variable>
#include <mutex>

#include "core/client_impl.hpp"
#include "deadbolt/error.hpp"

namespace deadbolt {

RateLimiter::RateLimiter(std::shared_ptr<detail::ClientImpl> client, std::string name,
                         RateLimit limit)
    : client_(std::move(client)), name_(std::move(name)), limit_(limit) {}

RateDecision RateLimiter::call(std::int64_t n) const {
    RateDecision out;
    client_->offered(&detail::Store::rate_limits).rate_take(name_, limit_, n, out).throw_if_error();
    return out;
}

RateDecision RateLimiter::try_acquire(std::int64_t n) const {
    if (n < 1 || n > limit_.burst)
        throw UsageError(make_error_code(errc::invalid_argument),
                         fmt::format("rate limiter '{}': cannot take {} tokens from a bucket of "
                                     "{}: take between 1 and the burst",
                                     name_, n, limit_.burst));
    return call(n);
}

bool RateLimiter::acquire(std::int64_t n, const AcquireOptions& how) const {
    std::mutex m;
    std::condition_variable_any cv;  // only a stop request wakes it early
    auto started = clock::now();
    for (;;) {
        if (how.cancel.stop_requested())
            throw LockError(make_error_code(errc::cancelled),
                            fmt::format("rate limiter '{}': cancelled while waiting", name_));
        auto d = try_acquire(n);
        if (d.allowed) return true;
        // Tokens come back only with time and others only take them: if the bucket cannot
        // refill by the deadline, waiting cannot help.
        auto wake = clock::now() + d.retry_in;
        if (how.deadline && wake > *how.deadline) return false;
        if (how.on_wait)
            how.on_wait(WaitInfo{
                std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - started),
                d.retry_in});
        std::unique_lock lk(m);
        cv.wait_until(lk, how.cancel, wake, [] { return false; });
    }
}

std::int64_t RateLimiter::available() const {
    return call(0).remaining;
}

}  // namespace deadbolt
