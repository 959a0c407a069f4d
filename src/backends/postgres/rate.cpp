// RateLimiter on PostgreSQL: a token bucket per name in `buckets`, refilled by the server's
// clock and taken from in one call of the schema's rate_take (the row locked), so clients
// together never exceed the burst or the rate, whatever their own clocks say.
#include <fmt/format.h>

#include "backends/postgres/keys.hpp"
#include "backends/postgres/store.hpp"

namespace deadbolt::detail {

Status PgStore::rate_take(const std::string& name, const RateLimit& limit, std::int64_t n,
                          RateDecision& out) {
    std::vector<SqlRows> rows;
    auto st = run_once(
        fmt::format("SELECT allowed, wait_ms, remaining FROM {}.rate_take({}, {}, "
                    "{}, {}, {})",
                    schema_, advisory_key(name), limit.rate, limit.per.count(), limit.burst, n),
        rows);
    if (!st.ok()) return st;
    const auto& r = rows.back();
    out = {r.at(0, 0) == "t", std::chrono::milliseconds(std::stoll(r.at(0, 1))),
           std::stoll(r.at(0, 2))};
    return {};
}

}  // namespace deadbolt::detail
