// Fenced values on PostgreSQL: schema.fenced holds each key's value, the highest fence that
// wrote it and its version; schema.fenced_write applies a write only when its fence is not
// older and (when asked) the version did not move, under the row's lock. Users' own tables
// follow the same rule in their UPDATE (README, "Databases"). A write guarded by the lock
// runs on the holding's own session: while that session lives it holds the lock, so the
// write cannot land once the lock is lost.
#include <fmt/format.h>

#include "backends/postgres/keys.hpp"
#include "backends/postgres/store.hpp"
#include "backends/sql/holding.hpp"

namespace deadbolt::detail {

Status PgStore::fenced_get(std::string_view key, FencedValue& out) {
    std::vector<SqlRows> rows;
    auto st = run_once(fmt::format("SELECT value, version FROM {}.fenced WHERE key = {}", schema(),
                                   bytea_literal(key)),
                       rows);
    if (!st.ok()) return st;
    out = {};
    if (rows.front().empty()) return {};
    out.value = bytea_value(rows.front().at(0, 0));
    out.version = std::stoull(rows.front().at(0, 1));
    return {};
}

Status PgStore::fenced_write(std::string_view key, std::string_view value, std::uint64_t fence,
                             std::string_view version, FencedResult& out) {
    if (fence > static_cast<std::uint64_t>(INT64_MAX))
        return Status::error(errc::invalid_argument,
                             fmt::format("fence {} is beyond PostgreSQL's bigint", fence));
    std::string expected = "NULL";
    if (!version.empty()) {
        if (version.find_first_not_of("0123456789") != std::string_view::npos ||
            version.size() > 18)
            return Status::error(
                errc::invalid_argument,
                fmt::format("version '{}' is not a version fenced_get returned", version));
        expected = std::string(version);
    }
    std::vector<SqlRows> rows;
    auto st =
        run_once(fmt::format("SELECT accepted, highest, version_now FROM "
                             "{}.fenced_write({}, {}, {}, {})",
                             schema(), bytea_literal(key), bytea_literal(value), fence, expected),
                 rows);
    if (!st.ok()) return st;
    const auto& r = rows.front();
    out.accepted = r.at(0, 0) == "t";
    out.highest = std::stoull(r.at(0, 1));
    out.version = std::stoull(r.at(0, 2));
    out.stale_fence = !out.accepted && out.highest > fence;
    return {};
}

Status PgStore::put_if_held(const Holding& h, std::string_view key, std::string_view value,
                            Clock::time_point by, bool& put) {
    put = false;
    auto s = static_cast<const SqlHolding&>(h).session();
    if (!s || !s->alive()) return {};  // released, or its session ended: not ours
    std::lock_guard lock(s->m);
    std::vector<SqlRows> rows;
    auto st = s->run(fmt::format("INSERT INTO {0}.fenced AS f VALUES ({1}, {2}, 0, 1) ON CONFLICT "
                                 "(key) DO UPDATE SET value = EXCLUDED.value, version = f.version "
                                 "+ 1",
                                 schema(), bytea_literal(key), bytea_literal(value)),
                     by, rows);
    // The session ended first (nothing was written), or with the statement (its outcome is
    // unknown): either way its holding is gone, and the renewer checks now.
    bool gone = session_gone(st, *s);
    if (gone && st.ec == make_error_code(errc::connection_lost)) return {};
    put = st.ok();
    return st;
}

}  // namespace deadbolt::detail
