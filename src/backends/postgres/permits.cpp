// A Semaphore's permits on PostgreSQL: rows of `permits` with an expiry in the server's clock
// (permit_claim.hpp says how one is taken). Extending, releasing and checking one is one
// statement on a pooled session; a release notifies the gate's holder, which waits for it.
#include <fmt/format.h>

#include <cstdint>

#include "backends/postgres/keys.hpp"
#include "backends/postgres/permit_claim.hpp"
#include "backends/postgres/store.hpp"

namespace deadbolt::detail {
namespace {

std::string live_row(const std::string& key, std::string_view id) {
    return fmt::format("key = {} AND id = {} AND expires > clock_timestamp()", key,
                       bytea_literal(id));
}

std::string extension(const std::string& schema, const std::string& key, std::string_view id,
                      std::chrono::milliseconds keep) {
    return fmt::format(
        "WITH u AS (UPDATE {}.permits SET expires = clock_timestamp() + {} * interval '1 "
        "millisecond' WHERE {} RETURNING 1) SELECT count(*) FROM u",
        schema, keep.count(), live_row(key, id));
}

std::string releasing(const std::string& schema, const std::string& key, std::string_view id,
                      std::uint64_t fence = 0) {
    if (fence == 0)
        return fmt::format("SELECT {}.release_permit({}, {})::int", schema, key, bytea_literal(id));
    // Only the grant's own row (a ReentrantMutex's, by its fence): locked first, so that the
    // owner's fresh holding cannot replace it between the look and the release.
    return fmt::format(
        "WITH mine AS (SELECT 1 FROM {0}.permits WHERE key = {1} AND id = {2} AND fence = {3} "
        "FOR UPDATE) SELECT CASE WHEN EXISTS (SELECT 1 FROM mine) THEN "
        "{0}.release_permit({1}, {2})::int ELSE 0 END",
        schema, key, bytea_literal(id), fence);
}

}  // namespace

std::unique_ptr<Claim> PgStore::open(const LockSpec& spec, std::stop_token cancel) {
    if (spec.shape == Shape::permits || spec.shape == Shape::reentrant)
        return std::make_unique<PgPermitClaim>(*this, spec, schema_, std::move(cancel));
    return SqlStore::open(spec, std::move(cancel));
}

Verdict PgStore::on_row(RowOp op, const SqlRow& row, std::chrono::milliseconds keep,
                        Clock::time_point by) {
    std::string sql;
    switch (op) {
        case RowOp::extend:
            sql = extension(schema_, row.key, row.id, keep);
            break;
        case RowOp::release:
            sql = releasing(schema_, row.key, row.id, row.fence);
            break;
        case RowOp::check:
            sql = fmt::format("SELECT count(*) FROM {}.permits WHERE {}", schema_,
                              live_row(row.key, row.id));
            break;
    }
    std::vector<SqlRows> out;
    // A row outlives any session: no answer leaves it unknown, whatever the session did.
    if (auto st = run_once(sql, out, by); !st.ok()) return Verdict::unknown(st);
    return out.back().at(0, 0) == "1" ? Verdict::yes() : Verdict::no();
}

Status PgStore::permit_release(const std::string& name, std::string_view id, bool& released) {
    std::vector<SqlRows> out;
    auto st = run_once(releasing(schema_, std::to_string(advisory_key(name)), id), out);
    released = st.ok() && out.back().at(0, 0) == "1";
    return st;
}

Status PgStore::permit_extend(const std::string& name, std::string_view id,
                              std::chrono::milliseconds keep, bool& extended) {
    std::vector<SqlRows> out;
    auto st = run_once(extension(schema_, std::to_string(advisory_key(name)), id, keep), out);
    extended = st.ok() && out.back().at(0, 0) == "1";
    return st;
}

Status PgStore::permits_in_use(const std::string& name, int permits, int& in_use) {
    std::vector<SqlRows> out;
    auto st = run_once(fmt::format("SELECT least(count(*), {}) FROM {}.permits WHERE key = {} AND "
                                   "expires > clock_timestamp()",
                                   permits, schema_, advisory_key(name)),
                       out);
    in_use = st.ok() ? std::stoi(out.back().at(0, 0)) : 0;
    return st;
}

}  // namespace deadbolt::detail
