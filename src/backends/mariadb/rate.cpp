// RateLimiter on MariaDB: a token bucket per name in deadbolt_buckets (keyed by the name's
// SHA-256), refilled by the server's clock. A take is one transaction in one round trip: the
// row is made full when missing, locked, refilled by the time elapsed and taken from when it
// has the tokens. (INSERT ... ON DUPLICATE KEY UPDATE locks the row exclusively at once; an
// INSERT IGNORE would take a shared lock first, and two takers upgrading theirs deadlock.) A full
// bucket is the same as none, so its shape may change then; otherwise clients that disagree on it
// are refused.
#include <fmt/format.h>

#include "backends/mariadb/names.hpp"
#include "backends/mariadb/store.hpp"

namespace deadbolt::detail {

Status MyStore::rate_take(const std::string& name, const RateLimit& limit, std::int64_t n,
                          RateDecision& out) {
    auto h = hash_expression(name);
    const auto rate = limit.rate, per = limit.per.count(), burst = limit.burst;
    // @deadbolt_t: the tokens now, or NULL for no row (a full bucket); @deadbolt_agree: the
    // row's shape is ours, or it is full by its own.
    auto sql = fmt::format(
        "START TRANSACTION; SET @deadbolt_now = UNIX_TIMESTAMP(NOW(6)) * 1000, @deadbolt_t = "
        "NULL, @deadbolt_cfg = NULL, @deadbolt_agree = 1; {5}"
        "SELECT LEAST(burst, tokens + GREATEST(0, @deadbolt_now - ts) * rate / per_ms), "
        "CONCAT(rate, '/', per_ms, 'ms/', burst), rate = {1} AND per_ms = {2} AND burst = {3} "
        "INTO @deadbolt_t, @deadbolt_cfg, @deadbolt_same FROM deadbolt_buckets WHERE key_hash = "
        "{0} {6}; SET @deadbolt_agree = @deadbolt_t IS NULL OR @deadbolt_same OR @deadbolt_t >= "
        "SUBSTRING_INDEX(@deadbolt_cfg, '/', -1), @deadbolt_t = IF(@deadbolt_t IS NULL OR NOT "
        "@deadbolt_same, {3}, @deadbolt_t), @deadbolt_ok = @deadbolt_agree AND {4} > 0 AND "
        "@deadbolt_t >= {4}; UPDATE deadbolt_buckets SET tokens = @deadbolt_t - {4}, ts = "
        "@deadbolt_now, rate = {1}, per_ms = {2}, burst = {3} WHERE key_hash = {0} AND "
        "@deadbolt_ok; COMMIT; SELECT @deadbolt_agree, @deadbolt_ok, IF(@deadbolt_t < {4}, "
        "CEIL(({4} - @deadbolt_t) * {2} / {1}), 0), FLOOR(@deadbolt_t - IF(@deadbolt_ok, {4}, "
        "0)), @deadbolt_cfg",
        h, rate, per, burst, n,
        n > 0 ? fmt::format("INSERT INTO deadbolt_buckets VALUES ({0}, {1}, @deadbolt_now, {2}, "
                            "{3}, {1}) ON DUPLICATE KEY UPDATE key_hash = key_hash; ",
                            h, burst, rate, per)
              : std::string(),
        n > 0 ? "FOR UPDATE" : "");
    std::vector<SqlRows> rows;
    if (auto st = run_once(sql, rows); !st.ok()) return st;
    const auto& r = rows.back();
    if (r.at(0, 0) != "1")
        return Status::error(
            errc::invalid_argument,
            fmt::format("the rate limiter is used with rate/per/burst {} but this client asked "
                        "for {}/{}ms/{}: every user of a name must agree",
                        r.at(0, 4), rate, per, burst));
    out = {r.at(0, 1) == "1", std::chrono::milliseconds(std::stoll(r.at(0, 2))),
           std::stoll(r.at(0, 3))};
    return {};
}

}  // namespace deadbolt::detail
