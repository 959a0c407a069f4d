// Client: a connection to one engine (chosen by the URL's scheme) and the factory of its locks.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "deadbolt/acquire_options.hpp"
#include "deadbolt/count_down_latch.hpp"
#include "deadbolt/fair_mutex.hpp"
#include "deadbolt/fenced_data.hpp"
#include "deadbolt/leader_election.hpp"
#include "deadbolt/lease.hpp"
#include "deadbolt/lock_status.hpp"
#include "deadbolt/multi_lock.hpp"
#include "deadbolt/mutex.hpp"
#include "deadbolt/options.hpp"
#include "deadbolt/permit_expirable_semaphore.hpp"
#include "deadbolt/rate_limiter.hpp"
#include "deadbolt/reentrant_mutex.hpp"
#include "deadbolt/rwlock.hpp"
#include "deadbolt/semaphore.hpp"

namespace deadbolt {

namespace detail {
struct ClientImpl;
struct ClientAccess;
}  // namespace detail

/// What Client::acquire takes under a name.
enum class LockMode {
    exclusive,  ///< Mutex.
    fair,       ///< FairMutex (FIFO, direct handoff).
    shared,     ///< RWLock read lease (fence 0).
    write,      ///< RWLock write lease.
};

/// A handle to one engine of those linked into this program, chosen by the URL's scheme
/// (url_forms() lists them): Redis in its topologies, etcd, ZooKeeper, PostgreSQL or MariaDB.
/// Cheap to copy; copies share connections and background threads. Thread-safe.
class Client {
  public:
    /// Connects now (so a wrong password or dead server is reported here), through the engine
    /// linked in that takes url's scheme (an unknown scheme is a UsageError naming those that
    /// are). The Redis engine's URL forms:
    /// redis://[user[:password]@]host[:port][/db][?option=value&...], rediss://... (TLS),
    /// unix:///path/to/redis.sock[?db=N&...], and
    /// redlock://[user[:password]@]host:port,host:port,host:port[,...][/db][?option=value&...]
    /// (the same credentials and options on every node; allow_fewer=1 permits 1 or 2 nodes),
    /// redis-sentinel://host[:port],.../master-name[/db][?...], and
    /// redis-cluster://[user[:password]@]host:port,...[?...] (a few nodes to read the slot
    /// map from); etcd's: etcd://[user:password@]host[:port],...[?...] or etcds://... (any
    /// members of an etcd cluster; proven by one read); the others' in url_forms(). Throws
    /// UsageError for a bad URL or option, a Redlock node set that weakens the algorithm (a server
    /// listed twice, by any name; a replica), or a redis-cluster:// node not in cluster mode;
    /// ConnectionError when the server, a majority of Redlock nodes, or every listed cluster node
    /// or etcd member is unreachable; ServerError for auth/ACL failures.
    static Client connect(std::string_view url, const ClientOptions& options = {});

    /// How the URLs of the engines linked into this program look, one entry per engine, by
    /// name (what Client::connect takes). Never throws except std::bad_alloc.
    static std::vector<std::string> url_forms();

    /// A Mutex for name. Throws UsageError for an empty or oversized name or bad options.
    /// Every factory below also throws UsageError, with the reason, when this client's engine
    /// does not keep the primitive (MariaDB: no RWLock, ReentrantMutex, semaphores, election
    /// or latch; redlock://: no FairMutex, semaphores, RateLimiter or latch).
    Mutex mutex(std::string_view name, MutexOptions options = {}) const;

    /// A FairMutex (FIFO across processes, direct handoff) for name. Throws UsageError.
    FairMutex fair_mutex(std::string_view name, MutexOptions options = {}) const;
    /// A ReentrantMutex for name; owner empty = this client + the calling thread. Throws
    /// UsageError for a bad name, options or owner id (over kMaxNameBytes).
    ReentrantMutex reentrant_mutex(std::string_view name, MutexOptions options = {},
                                   std::string_view owner = {}) const;
    /// An RWLock for name. Throws UsageError.
    RWLock rwlock(std::string_view name, MutexOptions options = {}) const;
    /// A Semaphore of permits (>= 1) for name. Throws UsageError.
    Semaphore semaphore(std::string_view name, int permits, MutexOptions options = {}) const;
    /// A PermitExpirableSemaphore of permits (>= 1) for name. Throws UsageError.
    PermitExpirableSemaphore permit_semaphore(std::string_view name, int permits,
                                              MutexOptions options = {}) const;
    /// A MultiLock over names (1 to kMaxMultiNames, distinct). Throws UsageError for a bad,
    /// repeated or missing name, or bad options.
    MultiLock multi_lock(std::vector<std::string> names, MutexOptions options = {}) const;
    /// A RateLimiter (token bucket) for name. Throws UsageError for a bad name, or a rate or
    /// burst outside 1..1e9 or a period outside 1 ms..30 days.
    RateLimiter rate_limiter(std::string_view name, RateLimit limit) const;
    /// A LeaderElection under name; options shape the leader's term (ttl, renewal, on_lost).
    /// Throws UsageError for a bad name or options.
    LeaderElection election(std::string_view name, MutexOptions options = {}) const;
    /// A CountDownLatch for name. Throws UsageError for a bad name.
    CountDownLatch latch(std::string_view name) const;

    /// Acquires name, waiting as AcquireOptions say. Throws LockError(not_acquired) when the
    /// deadline passes, LockError(cancelled), UsageError, ConnectionError, ServerError.
    Lease acquire(std::string_view name, const MutexOptions& options = {},
                  const AcquireOptions& how = {}) const;
    /// As acquire(); returns an empty Lease and sets ec instead of throwing.
    Lease acquire(std::string_view name, const MutexOptions& options, const AcquireOptions& how,
                  std::error_code& ec) const noexcept;

    /// Acquires name in mode, waiting as AcquireOptions say; throws as acquire() above.
    Lease acquire(std::string_view name, LockMode mode, const MutexOptions& options,
                  const AcquireOptions& how = {}) const;

    /// Acquires every one of names together (see MultiLock); the Lease has one fence per name.
    /// Throws as acquire() above.
    Lease acquire_all(const std::vector<std::string>& names, const MutexOptions& options = {},
                      const AcquireOptions& how = {}) const;

    /// Waits until this client leads the election name with value (see LeaderElection); the
    /// Lease is the term (fence() = term) and releasing it resigns. Throws as acquire() above.
    Lease campaign(std::string_view name, std::string_view value, const MutexOptions& options = {},
                   const AcquireOptions& how = {}) const;

    /// The lock's state on the server. Throws ConnectionError / ServerError / UsageError.
    LockStatus status(std::string_view name) const;
    /// The held locks whose names match the glob pattern (Redis MATCH syntax; "*" = all),
    /// found by SCAN under the client's prefix on every node (never KEYS, so the server stays
    /// responsive), sorted by name. Plain strings and numbers another tool wrote look like
    /// redis-py locks and latches: they are listed only with include_foreign. Throws
    /// ConnectionError / ServerError (a node refused SCAN: grant it), UsageError for an
    /// empty pattern.
    std::vector<ListedLock> list(std::string_view pattern = "*",
                                 bool include_foreign = false) const;
    /// Frees name whatever holds it (an operator's tool, as Redisson's forceUnlock): waiters
    /// are woken, each evicted holder reports the loss at its next renewal (on_lost, the stop
    /// token), and later grants get higher fences, so a resource fenced by a new holder
    /// refuses the old one's writes. Returns what held it ("mutex", "readers", "reentrant",
    /// "leader", "semaphore") or "free". Throws ServerError(wrong_type) for a latch, a rate
    /// limiter or foreign data, UsageError over redlock://, ConnectionError.
    std::string force_unlock(std::string_view name) const;

    /// Writes value to key only if fence >= the highest fence the key has seen (the highest
    /// is kept beside it, with the key's expiry). Throws ConnectionError / ServerError.
    FencedResult fenced_set(std::string_view key, std::string_view value,
                            std::uint64_t fence) const;
    /// Reads key's value and version in one step, for fenced_cas. Throws ConnectionError /
    /// ServerError, UsageError for an empty key or over redlock://.
    FencedValue fenced_get(std::string_view key) const;
    /// Writes value to key only if fence >= the highest fence the key has seen *and* nobody
    /// wrote it (through fenced_set/fenced_cas) since the read that returned version: a
    /// read-modify-write that loses no update even when two holders overlap. Refused writes
    /// change nothing (re-read and retry, or stop if the fence is stale). Throws as fenced_set.
    FencedResult fenced_cas(std::string_view key, std::string_view value, std::uint64_t fence,
                            std::uint64_t version) const;

    /// Round trip to the server; throws ConnectionError when it does not answer.
    void ping() const;

    /// What connect() found legal but weak (an even Redlock node count, a Redlock node down at
    /// connect and so unchecked); empty when nothing. Never throws.
    const std::vector<std::string>& warnings() const noexcept;

    /// The key a lock name is stored under (prefix + name), for interop with other clients.
    std::string lock_key(std::string_view name) const;

  private:
    explicit Client(std::shared_ptr<detail::ClientImpl> impl) : impl_(std::move(impl)) {}
    FencedResult fenced_write(std::string_view key, std::string_view value, std::uint64_t fence,
                              std::string_view version) const;
    friend struct detail::ClientAccess;
    std::shared_ptr<detail::ClientImpl> impl_;
};

}  // namespace deadbolt
