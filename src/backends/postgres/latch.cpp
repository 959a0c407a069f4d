// CountDownLatch on PostgreSQL: a row of `latches` holds a name's count and when it opens by
// itself (its TTL, in the server's clock). The count-down that reaches zero deletes the row
// and NOTIFYs the latch's channel in the same transaction (latch_down), so every waiter,
// listening since before it looked, wakes at once; an expiry announces nothing, so a waiter
// wakes then too.
#include <fmt/format.h>

#include "backends/postgres/keys.hpp"
#include "backends/postgres/listener.hpp"
#include "backends/postgres/store.hpp"
#include "core/watch.hpp"

namespace deadbolt::detail {

Status PgStore::latch_set(const std::string& name, std::int64_t count,
                          std::chrono::milliseconds ttl, bool& set) {
    // A row that expired is an open latch: it may be set again.
    std::vector<SqlRows> out;
    auto st = run_once(
        fmt::format("WITH s AS (INSERT INTO {0}.latches VALUES ({1}, {2}, clock_timestamp() + "
                    "{3} * interval '1 millisecond') ON CONFLICT (key) DO UPDATE SET count = "
                    "EXCLUDED.count, expires = EXCLUDED.expires WHERE latches.expires <= "
                    "clock_timestamp() RETURNING 1) SELECT count(*) FROM s",
                    schema_, advisory_key(name), count, ttl.count()),
        out);
    set = st.ok() && out.back().at(0, 0) == "1";
    return st;
}

Status PgStore::latch_count_down(const std::string& name, bool& opened) {
    std::vector<SqlRows> out;
    auto st = run_once(fmt::format("SELECT {}.latch_down({})", schema_, advisory_key(name)), out);
    opened = st.ok() && out.back().at(0, 0) == "t";
    return st;
}

namespace {

// The latch's count (0: open) and the milliseconds until it opens by itself.
Status read_latch(SqlStore& store, const std::string& schema, std::int64_t key, std::int64_t& count,
                  std::chrono::milliseconds& left) {
    std::vector<SqlRows> out;
    auto st = store.run_once(
        fmt::format("SELECT count, ceil(extract(epoch FROM expires - clock_timestamp()) * 1000) "
                    "FROM {}.latches WHERE key = {} AND expires > clock_timestamp()",
                    schema, key),
        out);
    count = 0;
    left = std::chrono::milliseconds(-1);
    if (st.ok() && !out.back().empty()) {
        count = std::stoll(out.back().at(0, 0));
        left = std::chrono::milliseconds(std::stoll(out.back().at(0, 1)));
    }
    return st;
}

}  // namespace

Status PgStore::latch_count(const std::string& name, std::int64_t& count) {
    std::chrono::milliseconds left{};
    return read_latch(*this, schema_, advisory_key(name), count, left);
}

bool PgStore::latch_wait(const std::string& name, const AcquireOptions& how) {
    const auto key = advisory_key(name);
    PgListener waker(*this, fmt::format("deadbolt_latch_{}", key), how.cancel);
    auto look = [&](Look& found) {
        std::int64_t count = 0;
        auto st = read_latch(*this, schema_, key, count, found.ttl);
        found.done = count == 0;
        return st;
    };
    return detail::watch(*this, waker, false, look, how, std::chrono::milliseconds(0));
}

}  // namespace deadbolt::detail
