// Locks under test: deadbolt's Mutex lease, and the flawed schemes users still copy (kept
// here only, as negative controls the checker must catch). A new lock type is one adapter.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

struct deadbolt_shim_clock;

namespace deadbolt::torture {

struct Holding {
    std::uint64_t fence = 0;   // 0 when the scheme has none
    std::int64_t valid_until;  // CLOCK_MONOTONIC ns; kForever when the scheme has no notion
};

class LockAdapter {
  public:
    virtual ~LockAdapter() = default;
    /// Tries until `wait` passes; nullopt if not obtained.
    virtual std::optional<Holding> acquire(std::chrono::milliseconds wait) = 0;
    /// The holding's current validity (renewals move it), read just before release.
    virtual std::int64_t valid_until() = 0;
    virtual void release() = 0;
};

/// kinds: deadbolt, deadbolt-object (one Mutex object locked again and again), deadbolt-redlock:N
/// (a Mutex over N independent masters), deadbolt-sentinel (a Mutex through redis-sentinel://),
/// deadbolt-cluster (through redis-cluster://), deadbolt-fair, deadbolt-write (RWLock's writer),
/// deadbolt-reentrant (taken twice), deadbolt-multi (a MultiLock of three names), deadbolt-leader
/// (a LeaderElection's term), deadbolt-semaphore:N (N >= 2 permits), setnx-del, incr-expire,
/// setnx-getset, setnx-nottl. clock: the worker's steered lease clock (deadbolt only; the naive
/// schemes have no notion). url: where deadbolt kinds connect (redis:// or redlock://); port: the
/// naive kinds' server.
std::unique_ptr<LockAdapter> make_lock(const std::string& kind, const std::string& url,
                                       std::uint16_t port, std::chrono::milliseconds ttl,
                                       const deadbolt_shim_clock* clock = nullptr);
/// A kind is a primitive, optionally followed by "@" and where it lives:
/// "deadbolt-reentrant@redlock:3", "deadbolt-multi@cluster", "deadbolt-leader@sentinel".
/// deadbolt-redlock:N, deadbolt-sentinel and deadbolt-cluster name a Mutex there.
struct KindParts {
    std::string primitive;
    std::string backend;  // "", "redlock:N", "sentinel", "cluster", "etcd", "zk", "pg", "mariadb"
};
KindParts kind_parts(const std::string& kind);
bool known_lock(const std::string& kind);
/// Whether the kind finds its server through Redis Sentinel.
bool uses_sentinel(const std::string& kind);
/// Whether the kind lives on a Redis Cluster (3 masters, 1 replica each).
bool uses_cluster(const std::string& kind);
/// Whether the kind lives on etcd (3 members).
bool uses_etcd(const std::string& kind);
/// Whether the kind lives on ZooKeeper (3 servers).
bool uses_zk(const std::string& kind);
/// "pg", "mariadb" or "memcached" for a lock on that one server, else "".
std::string uses_database(const std::string& kind);
/// Whether the kind lives on a consensus engine (etcd or ZooKeeper).
bool uses_consensus(const std::string& kind);
/// N for a kind over redlock:N (0 if N is not a number); 1 for every other kind.
int lock_nodes(const std::string& kind);
/// Whether the kind promises at most capacity() holders while valid (and increasing fences
/// where it hands them out).
bool promises_safety(const std::string& kind);
/// Holders the kind admits at once: N for deadbolt-semaphore:N (0 if N is not a number), else 1.
int capacity(const std::string& kind);
/// Whether holdings carry fences (exclusive deadbolt kinds; a semaphore's permits do not).
bool hands_out_fences(const std::string& kind);

}  // namespace deadbolt::torture
