// RateLimiter on Redis: a token bucket refilled by the server's clock in one script.
#include "backends/redis/scripts.hpp"
#include "backends/redis/store.hpp"

namespace deadbolt::detail {

Status RedisStore::rate_take(const std::string& name, const RateLimit& limit, std::int64_t n,
                             RateDecision& out) {
    std::string rate = std::to_string(limit.rate), per = std::to_string(limit.per.count()),
                burst = std::to_string(limit.burst), want = std::to_string(n);
    Reply r;
    if (Status st = server->eval({&rate_take_script(), {key_of(name)}, {rate, per, burst, want}}, r,
                                 deadline());
        !st.ok())
        return st;
    if (r.type != Reply::Type::array || r.elements.size() != 3)
        return Status::error(errc::protocol_error, "unexpected reply from the rate limiter script");
    out = {r.elements[0].integer == 1, std::chrono::milliseconds(r.elements[1].integer),
           r.elements[2].integer};
    return {};
}

}  // namespace deadbolt::detail
