// What a client sees of a lock without holding it: its state and its holders (Client::status,
// Client::list).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace deadbolt {

/// Who holds a lock, as far as the server can tell: deadbolt's tokens name their host and
/// process; a holder another tool wrote (a redis-py lock) has an empty host.
struct Holder {
    std::string host{};  ///< The holder's host name; empty when deadbolt did not write it.
    int pid = 0;         ///< Its process id on that host; 0 when unknown.
    /// When it was granted, by the server's clock (its fence is the grant's time in
    /// microseconds); empty for semaphore permits and readers, which carry no fence.
    std::optional<std::chrono::system_clock::time_point> since{};
    std::chrono::milliseconds ttl{0};  ///< Its remaining time; -1 ms = no expiry.
    /// The kind of client that holds it when deadbolt did not write it, as the engine can
    /// tell ("redis-py Lock or another client", "etcdctl lock or concurrency.Mutex", "Kazoo
    /// or Curator", "psql or another session", "GET_LOCK of another client"); empty for
    /// deadbolt's own holders.
    std::string client{};
};

/// A lock's state as the server sees it now (one round trip, a snapshot).
struct LockStatus {
    bool held = false;                 ///< Somebody holds it (any kind, any holder).
    std::chrono::milliseconds ttl{0};  ///< Until it frees by itself when held; -1 ms: the
                                       ///< holder set no expiry (a foreign lock).
    std::uint64_t last_fence = 0;      ///< Last fencing token handed out; 0 = unknown.
    std::string kind{};  ///< "free", "mutex" (also FairMutex, RWLock writer), "reentrant",
                         ///< "leader", "semaphore", or "readers" (RWLock read-held).
    int holders = 0;     ///< Holders now: 1 for a held mutex, owners of a reentrant lock, live
                         ///< readers or permits.
    int waiters = 0;     ///< Waiters in line, as the engine keeps them (on Redis: those
                         ///< listening for their turn, of any kind).
    int permits = 0;     ///< A semaphore's permit count; 0 for other kinds.
    bool writer_waiting = false;  ///< An RWLock writer has claimed the lock and waits.
    /// The holders (at most kMaxListedHolders of them, soonest to expire last).
    std::vector<Holder> held_by{};
    std::string value{};  ///< A LeaderElection's value (what the leader proclaimed).
    /// > 0: the holding ends with its holder's session, after this long without a word from
    /// it (ZooKeeper's session timeout, a database session's idle timeout), rather than at a
    /// TTL of its own; ttl is then -1 ms unless the engine can tell how much of it is left.
    std::chrono::milliseconds session_timeout{0};
};

/// LockStatus::held_by lists at most this many holders (LockStatus::holders counts them all).
inline constexpr int kMaxListedHolders = 100;

/// A lock found by Client::list.
struct ListedLock {
    std::string name{};   ///< Its name (the key without the client's prefix).
    LockStatus status{};  ///< Its state when it was listed.
};

}  // namespace deadbolt
