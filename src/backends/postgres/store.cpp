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
    switch (spec.shape) {
        case Shape::exclusive:
        case Shape::fair:
        case Shape::write:
        case Shape::read:
        case Shape::multi:
        case Shape::permits:
        case Shape::leader:
            break;
        default:
            return Status::error(
                errc::invalid_argument,
                fmt::format("deadbolt's PostgreSQL backend does not offer {} yet (Mutex, "
                            "FairMutex, RWLock, MultiLock and Semaphore are built): use it on "
                            "Redis, etcd or ZooKeeper",
                            primitive_of(spec.shape)));
    }
    if (spec.options.lock_delay.count() > 0)
        return Status::error(errc::invalid_argument,
                             "lock_delay cannot be kept on PostgreSQL: the server hands an ended "
                             "session's locks to the next waiter at once");
    return {};
}

Status PgStore::offers(std::string_view primitive) const {
    if (primitive == "FairMutex" || primitive == "force_unlock" || primitive == "Semaphore" ||
        primitive == "PermitExpirableSemaphore" || primitive == "RateLimiter" ||
        primitive == "CountDownLatch")
        return {};
    return Status::error(errc::invalid_argument,
                         fmt::format("deadbolt's PostgreSQL backend does not offer {} yet (Mutex, "
                                     "FairMutex, RWLock, MultiLock and Semaphore are built): use "
                                     "it on Redis, etcd or ZooKeeper",
                                     primitive));
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
