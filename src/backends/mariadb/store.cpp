#include "backends/mariadb/store.hpp"

#include <fmt/format.h>

#include "backends/mariadb/conn.hpp"
#include "backends/mariadb/dialect.hpp"
#include "backends/mariadb/names.hpp"
#include "backends/mariadb/schema.hpp"
#include "core/token.hpp"

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
    else if (primitive == HeldWrites::kWhat)
        return Status::error(errc::invalid_argument,
                             "put_if_current is not built on MariaDB: guard the data by the "
                             "lease's fence instead (Client::fenced_set / fenced_cas)");
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

MyStore::MyStore(ClientImpl& c, const MyUrl& url, const std::shared_ptr<MyConn>& first)
    : SqlStore(
          c, std::make_unique<MyDialect>(this_origin(), first->server_version() >= 100500),
          [url](Clock::time_point by, std::shared_ptr<SqlSession>& out) {
              std::shared_ptr<MyConn> conn;
              auto st = MyConn::open(url, by, conn);
              out = std::move(conn);
              return st;
          },
          first),  // a copy: the dialect's argument reads first, in no set order
      database_(url.database),
      user_(url.options.username) {}

Status MyStore::keeps(Shape shape) const {
    switch (shape) {
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
    return {};
}

Status MyStore::supports(const LockSpec& spec) const {
    if (Status st = keeps(spec.shape); !st.ok()) return st;
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

Status MyStore::refusal(std::string_view what) const {
    return refused(what);
}

std::string MyStore::record_names(const std::vector<std::string>& fresh) const {
    std::string values;
    for (const auto& n : fresh)
        values += fmt::format("{}({}, {}, UTC_TIMESTAMP(3))", values.empty() ? "" : ", ",
                              quoted(get_lock_name(n)), hex_literal(n));
    // seen moves at most once a minute: fewer row writes, and still far from a prune.
    return fmt::format(
        "INSERT INTO deadbolt_names (lock_name, name, seen) VALUES {} ON DUPLICATE KEY UPDATE "
        "seen = IF(seen < VALUES(seen) - INTERVAL 60 SECOND, VALUES(seen), seen);",
        values);
}

std::string MyStore::rights_advice() const {
    return fmt::format("User '{}' may not make or use deadbolt's tables in database {}: {}", user_,
                       database_, my_grants(database_, user_));
}

std::string MyStore::prune_names() const {
    // A free GET_LOCK has no waiters: the server hands a released lock to the first at once.
    // A session's row goes once it holds its first key no more (it ended, or let go).
    return fmt::format(
        "DELETE FROM deadbolt_names WHERE seen < UTC_TIMESTAMP(3) - INTERVAL {} SECOND AND "
        "IS_USED_LOCK(lock_name) IS NULL ORDER BY seen LIMIT 1000; DELETE FROM deadbolt_holders "
        "WHERE NOT (IS_USED_LOCK(lock_name) <=> conn)",
        kNamesKept.count());
}

Verdict MyStore::orphan_holds(const SqlHolding& held, Clock::time_point by) {
    // Its connection, known by its id and by the row its grant wrote (an id is not given
    // again before a restart, which empties the table), holding the first key still.
    return verdict_by(fmt::format("SELECT COUNT(*) FROM deadbolt_holders WHERE conn = {0} AND "
                                  "fence = {1} AND IS_USED_LOCK({2}) = {0}",
                                  held.orphan(), held.grant.fence, held.keys().front()),
                      "1", by);
}

Status MyStore::end_orphan(const SqlHolding& held, Clock::time_point by) {
    // Ended by itself meanwhile (1094: no such connection), it is ended.
    std::vector<SqlRows> out;
    auto st = run_once(fmt::format("KILL CONNECTION {}", held.orphan()), out, by);
    return st.ok() || st.detail.ends_with("(error 1094)") ? Status{} : st;
}

}  // namespace deadbolt::detail
