#include "backends/mariadb/store.hpp"

#include <fmt/format.h>

#include "backends/mariadb/conn.hpp"
#include "backends/mariadb/dialect.hpp"
#include "backends/mariadb/names.hpp"

namespace deadbolt::detail {
namespace {

constexpr const char* kNoSemaphore =
    "deadbolt offers no Semaphore on MariaDB: a waiter must wake when any of its permits frees, "
    "and MariaDB can wake a waiter only from one named lock's queue (no LISTEN/NOTIFY), so it "
    "would have to poll or hold a connection per permit: use a Semaphore on PostgreSQL, Redis, "
    "etcd or ZooKeeper";
constexpr const char* kBuilt =
    "(Mutex, FairMutex and MultiLock are built): use it on Redis, etcd or ZooKeeper";

}  // namespace

MyStore::MyStore(ClientImpl& c, const MyUrl& url, std::shared_ptr<SqlSession> first)
    : SqlStore(
          c, std::make_unique<MyDialect>(),
          [url](Clock::time_point by, std::shared_ptr<SqlSession>& out) {
              std::shared_ptr<MyConn> conn;
              auto st = MyConn::open(url, by, conn);
              out = std::move(conn);
              return st;
          },
          std::move(first)) {}

Status MyStore::supports(const LockSpec& spec) const {
    switch (spec.shape) {
        case Shape::exclusive:
        case Shape::fair:
        case Shape::multi:
            break;
        case Shape::permits:
            return Status::error(errc::invalid_argument, kNoSemaphore);
        case Shape::read:
        case Shape::write:
            return Status::error(errc::invalid_argument,
                                 "MariaDB's GET_LOCK has no shared mode, so deadbolt offers no "
                                 "RWLock on it: use a Mutex, or an RWLock on PostgreSQL, Redis, "
                                 "etcd or ZooKeeper");
        default:
            return Status::error(errc::invalid_argument,
                                 fmt::format("deadbolt's MariaDB backend does not offer {} yet {}",
                                             primitive_of(spec.shape), kBuilt));
    }
    if (spec.options.lock_delay.count() > 0)
        return Status::error(errc::invalid_argument,
                             "lock_delay cannot be kept on MariaDB: the server hands an ended "
                             "session's locks to the next waiter at once");
    if (spec.options.ttl.count() % 1000 != 0)
        return Status::error(
            errc::invalid_argument,
            fmt::format("a MariaDB lock's TTL is the session's wait_timeout, in whole seconds: "
                        "{} ms is not (ask for {} s)",
                        spec.options.ttl.count(), whole_seconds(spec.options.ttl)));
    return {};
}

Status MyStore::offers(std::string_view primitive) const {
    if (primitive == "FairMutex" || primitive == "force_unlock" || primitive == "RateLimiter")
        return {};
    if (primitive == "Semaphore" || primitive == "PermitExpirableSemaphore")
        return Status::error(errc::invalid_argument, kNoSemaphore);
    return Status::error(
        errc::invalid_argument,
        fmt::format("deadbolt's MariaDB backend does not offer {} yet {}", primitive, kBuilt));
}

std::string MyStore::record_names(const std::vector<std::string>& fresh) const {
    std::string values;
    for (const auto& n : fresh)
        values += fmt::format("{}({}, {})", values.empty() ? "" : ", ", quoted(get_lock_name(n)),
                              hex_literal(n));
    return fmt::format("INSERT IGNORE INTO deadbolt_names VALUES {};", values);
}

Status ensure_my_schema(SqlSession& s, const MyUrl& url, Clock::time_point by) {
    std::vector<SqlRows> out;
    auto st = s.run(
        "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = "
        "DATABASE() AND table_name IN ('deadbolt_fences', 'deadbolt_names', 'deadbolt_fenced', "
        "'deadbolt_buckets')",
        by, out);
    if (!st.ok()) return st;
    if (out.back().at(0, 0) == "4") return {};
    // Fenced values are keyed by their key's SHA-256: keys of any length and bytes.
    st = s.run(
        "CREATE SEQUENCE IF NOT EXISTS deadbolt_fences NOCYCLE; CREATE TABLE IF NOT "
        "EXISTS deadbolt_names (lock_name VARCHAR(64) CHARACTER SET ascii COLLATE "
        "ascii_bin PRIMARY KEY, name BLOB NOT NULL) ENGINE = InnoDB; CREATE TABLE IF NOT EXISTS "
        "deadbolt_fenced (key_hash BINARY(32) PRIMARY KEY, k LONGBLOB NOT NULL, value LONGBLOB, "
        "fence BIGINT UNSIGNED NOT NULL, version BIGINT UNSIGNED NOT NULL) ENGINE = InnoDB; "
        "CREATE TABLE IF NOT EXISTS deadbolt_buckets (key_hash BINARY(32) PRIMARY KEY, tokens "
        "DOUBLE NOT NULL, ts DOUBLE NOT NULL, rate BIGINT NOT NULL, per_ms BIGINT NOT NULL, "
        "burst BIGINT NOT NULL) ENGINE = InnoDB",
        by, out);
    if (st.ec == make_error_code(errc::permission_denied))
        return Status::error(
            errc::permission_denied,
            fmt::format("deadbolt keeps its fence sequence (deadbolt_fences), the names in use "
                        "(deadbolt_names), fenced values (deadbolt_fenced) and rate limiters' "
                        "buckets (deadbolt_buckets) in database {0}, and user '{1}' may not make "
                        "them ({2}). GRANT CREATE, SELECT, INSERT, UPDATE ON {0}.* TO '{1}', or "
                        "have a user who may connect once with this URL and GRANT SELECT, "
                        "INSERT, UPDATE ON those four to '{1}'",
                        url.database, url.options.username, st.detail));
    return st;
}

}  // namespace deadbolt::detail
