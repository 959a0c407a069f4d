#include "backends/mariadb/store.hpp"

#include <fmt/format.h>

#include "backends/mariadb/conn.hpp"
#include "backends/mariadb/dialect.hpp"
#include "backends/mariadb/names.hpp"

namespace deadbolt::detail {
namespace {

// What MariaDB cannot keep, and why: a waiter can be woken only from the queue of one named
// lock (GET_LOCK), never by a change announced to it (no LISTEN/NOTIFY).
Status refused(std::string_view primitive) {
    std::string why;
    if (primitive == "Semaphore" || primitive == "PermitExpirableSemaphore")
        why =
            "a waiter must wake when any of N permits frees, and one GET_LOCK waits for one "
            "name: it would take a connection per permit or polling";
    else if (primitive == "RWLock")
        return Status::error(errc::invalid_argument,
                             "MariaDB's GET_LOCK has no shared mode, so deadbolt offers no "
                             "RWLock on it: use a Mutex, or an RWLock on PostgreSQL, Redis, "
                             "etcd or ZooKeeper");
    else if (primitive == "ReentrantMutex")
        why =
            "a GET_LOCK belongs to the connection that took it, while a ReentrantMutex's "
            "owner may hold it from several clients; kept in a table instead, its release "
            "could wake nobody";
    else if (primitive == "LeaderElection")
        why = "observers must wake when the leader changes, which MariaDB cannot announce";
    else if (primitive == "CountDownLatch")
        why =
            "waiters must wake when the count reaches zero, which MariaDB cannot announce, and "
            "no lock's queue can stand for it (nobody holds a latch)";
    else
        why = "it is not built";
    return Status::error(
        errc::invalid_argument,
        fmt::format("deadbolt offers no {} on MariaDB: {} (MariaDB wakes a waiter only from one "
                    "named lock's queue; it has no LISTEN/NOTIFY). Use it on PostgreSQL, Redis, "
                    "etcd or ZooKeeper",
                    primitive, why));
}

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
        case Shape::read:
        case Shape::write:
            return refused("RWLock");
        case Shape::reentrant:
            return refused("ReentrantMutex");
        case Shape::permits:
            return refused("Semaphore");
        case Shape::leader:
            return refused("LeaderElection");
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
    return refused(primitive);
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
