#include "backends/postgres/store.hpp"

#include <fmt/format.h>

#include <map>

#include "backends/postgres/conn.hpp"
#include "backends/postgres/keys.hpp"
#include "backends/postgres/schema.hpp"
#include "core/token.hpp"

namespace deadbolt::detail {

PgStore::PgStore(ClientImpl& c, const PgUrl& url, std::shared_ptr<SqlSession> first)
    : SqlStore(
          c, std::make_unique<PgDialect>(url.schema, this_origin()),
          [url](Clock::time_point by, std::shared_ptr<SqlSession>& out) {
              std::shared_ptr<PgConn> conn;
              auto st = PgConn::open(url, by, conn);
              out = std::move(conn);
              return st;
          },
          std::move(first)),
      schema_(url.schema),
      user_(url.options.username.empty() ? "<your role>" : url.options.username) {}
Status PgStore::supports(const LockSpec& spec) const {
    // Every shape: session locks, and rows where a session cannot keep the shape.
    if (spec.options.lock_delay.count() > 0)
        return Status::error(errc::invalid_argument,
                             "lock_delay cannot be kept on PostgreSQL: the server hands an ended "
                             "session's locks to the next waiter at once");
    return {};
}

std::string PgStore::record_names(const std::vector<std::string>& fresh) const {
    // One row per key: ON CONFLICT DO UPDATE may not touch a row twice in one statement.
    std::map<std::int64_t, const std::string*> rows;
    for (const auto& n : fresh) rows.emplace(advisory_key(n), &n);
    std::string values;
    for (const auto& [key, name] : rows)
        values += fmt::format("{}({}, {})", values.empty() ? "" : ", ", key, bytea_literal(*name));
    // seen moves at most once a minute: fewer row versions, and still far from a prune.
    return fmt::format(
        "INSERT INTO {0}.names AS n (key, name) VALUES {1} ON CONFLICT (key) DO UPDATE SET "
        "seen = now() WHERE n.seen < now() - interval '1 minute';",
        schema_, values);
}

std::string PgStore::rights_advice() const {
    return used_by_others(schema_, user_);
}

std::string PgStore::prune_names() const {
    return fmt::format("SELECT {}.prune_names()", schema_);
}

namespace {

// Its backend, known by its pid and by the name its grant gave it (a pid the kernel gave
// another backend since would not carry this fence), holding the first key still: the end
// asks this too, so that it never ends a stranger's session.
std::string orphan_holding(const PgDialect& d, const SqlHolding& held) {
    return fmt::format(
        "pg_stat_activity a WHERE a.pid = {} AND a.application_name LIKE '{}' AND EXISTS "
        "(SELECT 1 FROM pg_locks l WHERE l.pid = a.pid AND l.granted AND l.locktype = "
        "'advisory' AND l.objsubid = 1 AND (l.classid::bigint << 32 | l.objid::bigint) = {})",
        held.orphan(), d.holding_like(held.grant.fence, held.grant.ttl), held.keys().front());
}

}  // namespace

Verdict PgStore::orphan_holds(const SqlHolding& held, Clock::time_point by) {
    return verdict_by(fmt::format("SELECT count(*) FROM {}",
                                  orphan_holding(static_cast<const PgDialect&>(dialect()), held)),
                      "1", by);
}

Status PgStore::end_orphan(const SqlHolding& held, Clock::time_point by) {
    std::vector<SqlRows> out;
    return run_once(
        fmt::format("SELECT count(*) FILTER (WHERE pg_terminate_backend(a.pid)) FROM {}",
                    orphan_holding(static_cast<const PgDialect&>(dialect()), held)),
        out, by);
}

}  // namespace deadbolt::detail
