// RateLimiter in a memory space: a token bucket refilled by the space's clock (so advance()
// refills it), taken from under the space's mutex.
#include <fmt/format.h>

#include <cmath>

#include "backends/memory/store.hpp"

namespace deadbolt::detail {

Status MemoryStore::rate_take(const std::string& name, const RateLimit& limit, std::int64_t n,
                              RateDecision& out) {
    return call([&](MemorySpace::Turn& t) {
        auto& buckets = t.state().buckets;
        const double rate = static_cast<double>(limit.rate),
                     per = static_cast<double>(limit.per.count()),
                     burst = static_cast<double>(limit.burst);
        double tokens = burst;
        if (auto it = buckets.find(key(name)); it != buckets.end()) {
            const MemBucket& b = it->second;
            const double since = std::chrono::duration<double, std::milli>(t.now() - b.at).count();
            const auto& was = b.limit;
            const double was_burst = static_cast<double>(was.burst);
            tokens = std::min(was_burst, b.tokens + since * static_cast<double>(was.rate) /
                                                        static_cast<double>(was.per.count()));
            const bool same =
                was.rate == limit.rate && was.per == limit.per && was.burst == limit.burst;
            if (!same && tokens < was_burst)
                return Status::error(
                    errc::invalid_argument,
                    fmt::format("the rate limiter is used with rate/per/burst {}/{}ms/{} but this "
                                "client asked for {}/{}ms/{}: every user of a name must agree",
                                was.rate, was.per.count(), was.burst, limit.rate, limit.per.count(),
                                limit.burst));
            if (!same) tokens = burst;  // a full bucket is no bucket: its shape may change
        }
        const auto want = static_cast<double>(n);
        out.allowed = n > 0 && tokens >= want;
        out.remaining = static_cast<std::int64_t>(std::floor(tokens - (out.allowed ? want : 0)));
        out.retry_in = out.allowed || n == 0 ? std::chrono::milliseconds(0)
                                             : std::chrono::milliseconds(static_cast<std::int64_t>(
                                                   std::ceil((want - tokens) * per / rate)));
        if (out.allowed) buckets[key(name)] = MemBucket{limit, tokens - want, t.now()};
        return Status{};
    });
}

}  // namespace deadbolt::detail
