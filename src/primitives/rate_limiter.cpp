#include "deadbolt/rate_limiter.hpp"
#include "backends/redis/store.hpp"

#include <fmt/format.h>

#include <condition_variable>
#include <mutex>

#include "backends/redis/commands.hpp"
#include "backends/redis/scripts.hpp"
#include "core/client_impl.hpp"
#include "deadbolt/error.hpp"

namespace deadbolt {

RateLimiter::RateLimiter(std::shared_ptr<detail::ClientImpl> client, std::string name,
                         RateLimit limit)
    : client_(std::move(client)), name_(std::move(name)), limit_(limit) {}

RateDecision RateLimiter::call(std::int64_t n) const {
    auto& c = *client_;
    std::string key = c.options.key_prefix + name_;
    std::string rate = std::to_string(limit_.rate), per = std::to_string(limit_.per.count()),
                burst = std::to_string(limit_.burst), want = std::to_string(n);
    detail::Reply r;
    redis(c)
        .server
        ->eval({&detail::rate_take_script(), {key}, {rate, per, burst, want}}, r, c.deadline())
        .throw_if_error();
    if (r.type != detail::Reply::Type::array || r.elements.size() != 3)
        throw ServerError(make_error_code(errc::protocol_error),
                          "unexpected reply from the rate limiter script");
    return {r.elements[0].integer == 1, std::chrono::milliseconds(r.elements[1].integer),
            r.elements[2].integer};
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
