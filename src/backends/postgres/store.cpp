#include "backends/postgres/store.hpp"

#include <fmt/format.h>

#include "backends/postgres/conn.hpp"
#include "backends/postgres/keys.hpp"

namespace deadbolt::detail {

PgStore::PgStore(ClientImpl& c, const PgUrl& url, std::shared_ptr<SqlSession> first)
    : SqlStore(
          c, std::make_unique<PgDialect>(url.schema),
          [url](Clock::time_point by, std::shared_ptr<SqlSession>& out) {
              std::shared_ptr<PgConn> conn;
              auto st = PgConn::open(url, by, conn);
              out = std::move(conn);
              return st;
          },
          std::move(first)),
      schema_(url.schema) {}
Status PgStore::supports(const LockSpec& spec) const {
    // Every shape: session locks, and rows where a session cannot keep the shape.
    if (spec.options.lock_delay.count() > 0)
        return Status::error(errc::invalid_argument,
                             "lock_delay cannot be kept on PostgreSQL: the server hands an ended "
                             "session's locks to the next waiter at once");
    return {};
}

Status PgStore::offers(std::string_view /*primitive*/) const {
    return {};  // every primitive deadbolt has (ARCHITECTURE item 41)
}

std::string PgStore::record_names(const std::vector<std::string>& fresh) const {
    std::string values;
    for (const auto& n : fresh)
        values += fmt::format("{}({}, {})", values.empty() ? "" : ", ", advisory_key(n),
                              bytea_literal(n));
    return fmt::format("INSERT INTO {}.names VALUES {} ON CONFLICT (key) DO NOTHING;", schema_,
                       values);
}

}  // namespace deadbolt::detail
