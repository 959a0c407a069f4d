// Option structs for clients and locks; every field has a default and says what it does.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <system_error>

#include "deadbolt/events.hpp"

namespace deadbolt {

using std::chrono::milliseconds;

/// Longest lock name accepted, in bytes (names are arbitrary bytes, NUL included).
inline constexpr std::size_t kMaxNameBytes = 4096;
/// Most names one MultiLock takes (one script call carries them all).
inline constexpr std::size_t kMaxMultiNames = 1024;
/// Shortest TTL accepted: below it the drift margin (1% + 2 ms) leaves no validity.
inline constexpr milliseconds kMinTtl{10};
/// Longest TTL accepted (30 days); use auto-renewal rather than a huge TTL.
inline constexpr milliseconds kMaxTtl{30LL * 24 * 3600 * 1000};

/// TLS settings (rediss://, etcds://, and MariaDB's tls=1; also settable as URL query options).
struct TlsOptions {
    bool enabled = false;     ///< Set by a TLS scheme or option.
    std::string ca_file{};    ///< PEM CA bundle; empty = the system's default trust store.
    std::string cert_file{};  ///< PEM client certificate for mutual TLS; empty = none.
    std::string key_file{};   ///< PEM private key of cert_file.
    std::string sni{};        ///< Server name sent and verified; empty = the URL's host.
    bool verify = true;       ///< Verify the server certificate; off only for tests.
};

/// How a Client reaches its server. URL fields override these where the URL sets them.
struct ClientOptions {
    milliseconds connect_timeout{2000};  ///< Deadline for connect + TLS + AUTH + SELECT.
    milliseconds command_timeout{2000};  ///< Deadline for one request's reply.
    std::string key_prefix{};            ///< Prepended to every lock name to form its key.
    std::string username{};              ///< ACL user (AUTH user pass); empty = "default".
    std::string password{};              ///< Password; empty = no AUTH.
    int db = 0;                          ///< Redis: the database selected after connecting.
    TlsOptions tls{};                    ///< TLS settings, for engines that take them.
    bool keepalive = true;               ///< TCP keepalive on every connection.
    milliseconds reconnect_min{10};      ///< First reconnect backoff; doubles, jittered.
    milliseconds reconnect_max{1000};    ///< Largest reconnect backoff.
    /// Redis: after each acquire and extend, WAIT until this many replicas acknowledged the write
    /// (Redisson's checkLockSyncedSlaves); fewer within sync_timeout fails with
    /// errc::not_replicated (an acquisition is then released). It narrows, does not close,
    /// the window in which a failover loses a lock: replication stays asynchronous, and a
    /// replica that acknowledged may still not be the one promoted. 0 = off.
    int sync_replicas = 0;
    milliseconds sync_timeout{100};  ///< How long WAIT may block (it blocks the connection).
    /// Redis: blocking callers that find the server's command connection busy open another, up to
    /// this many in all, and share them (pipelined) beyond: a reply then wakes its own
    /// caller instead of being handed over between threads. Opened when first needed; with
    /// sync_replicas always 1 (WAIT counts the writes of one connection). Below 1:
    /// Client::connect throws UsageError.
    int command_connections = 4;
    /// The clock lease validity is measured on; empty = std::chrono::steady_clock::now.
    /// For fault injection: a clock that runs slow makes the client overestimate its
    /// validity, as a host whose clock drifts would (Lease::valid_until() is on this clock).
    std::function<std::chrono::steady_clock::time_point()> clock;
    /// Hears what happens to every lock of the client (events.hpp); empty = nobody.
    LockObserver observer{};
    /// After the asynchronous API's event loop handled something, it keeps looking for the
    /// next reply this long before it sleeps, so a busy pipeline is not paced by the kernel's
    /// wake-ups (on a virtual machine they cost more than a lock's round trip). It costs at
    /// most this much CPU after each burst of work; 0 = sleep at once. Ignored on one CPU;
    /// negative: Client::connect throws UsageError.
    std::chrono::microseconds loop_spin{50};
};

/// Called once when a lease is lost (renewal refused, key gone, validity ran out, unlock
/// failed). Runs on the client's renewer thread: keep it short and do not block.
using LostHandler = std::function<void(std::string_view name, std::error_code why)>;

/// Behaviour of a Mutex and of the leases it grants.
struct MutexOptions {
    milliseconds ttl{30000};        ///< Lease time to live on the server.
    bool auto_renew = true;         ///< Renew while held, so a live holder never expires.
    milliseconds renew_every{0};    ///< Renewal period; 0 = ttl / 3.
    milliseconds max_hold{0};       ///< Stop renewing after this long held; 0 = no bound.
    milliseconds lock_delay{0};     ///< After a holder vanishes without releasing, nobody
                                    ///< gets the lock until this long after its TTL ran out.
    milliseconds wait_jitter{5};    ///< Up to this much random delay added to waits, so
                                    ///< waiters of many processes do not retry in lockstep.
    milliseconds handoff_grace{2};  ///< After this client released the lock while others
                                    ///< waited, its own next acquire waits up to this long
                                    ///< (or for the next release), so the woken waiter gets
                                    ///< the lock instead of the releaser re-taking it at once.
                                    ///< 0 = re-take at once (more throughput, less fairness).
    milliseconds waiter_ttl{5000};  ///< FairMutex queue places and RWLock writers' claims
                                    ///< last this long unless their waiter refreshes them
                                    ///< (every third of it): a dead waiter is skipped then.
                                    ///< On Redis, a waiter next in line looks by itself a
                                    ///< fifth of it after the one woken ahead of it, unless
                                    ///< that one took the lock: a woken waiter that died
                                    ///< keeps the lock free that long at most.
    LostHandler on_lost{};          ///< Called when a lease of this mutex is lost.
};

}  // namespace deadbolt
