// Option structs for clients and locks; every field has a default and says what it does.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
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

/// Settings only one engine reads (deadbolt/redis_options.hpp: RedisOptions), handed to
/// Client::connect in ClientOptions::engine.
struct EngineOptions {
    virtual ~EngineOptions() = default;
    /// The engine these are for, as its build option and package name it ("redis").
    virtual std::string_view engine() const noexcept = 0;

  protected:
    EngineOptions() = default;
    EngineOptions(const EngineOptions&) = default;
    EngineOptions(EngineOptions&&) = default;
    EngineOptions& operator=(const EngineOptions&) = default;
    EngineOptions& operator=(EngineOptions&&) = default;
};

/// How a Client reaches its engine, whichever it is. URL fields override these where the URL
/// sets them.
struct ClientOptions {
    milliseconds connect_timeout{2000};  ///< Deadline for connect + TLS + AUTH + SELECT.
    milliseconds command_timeout{2000};  ///< Deadline for one request's reply.
    std::string key_prefix{};            ///< Prepended to every lock name to form its key.
    std::string username{};              ///< User to log in as; empty = the engine's default.
    std::string password{};              ///< Password; empty = no AUTH.
    TlsOptions tls{};                    ///< TLS settings, for engines that take them.
    bool keepalive = true;               ///< TCP keepalive on every connection.
    milliseconds reconnect_min{10};      ///< First reconnect backoff; doubles, jittered.
    milliseconds reconnect_max{1000};    ///< Largest reconnect backoff.
    /// The clock lease validity is measured on; empty = std::chrono::steady_clock::now.
    /// For fault injection: a clock that runs slow makes the client overestimate its
    /// validity, as a host whose clock drifts would (Lease::valid_until() is on this clock).
    std::function<std::chrono::steady_clock::time_point()> clock;
    /// Hears what happens to every lock of the client (events.hpp); empty = nobody.
    LockObserver observer{};
    /// After the asynchronous API's event loop handled something, it keeps looking for the
    /// next reply this long before it sleeps, so a busy pipeline is not paced by the kernel's
    /// wake-ups (on a virtual machine they cost more than a lock's round trip). It costs at
    /// most this much CPU after each burst of work; 0 = sleep at once. Ignored when the
    /// process may run on one CPU only (a one-CPU machine, taskset, a container's cpuset: the
    /// affinity of the thread that starts the client's loop, at its first asynchronous call or,
    /// on Redlock, etcd and ZooKeeper, its first use) or its cgroup's CPU limit is under two
    /// CPUs; negative: Client::connect throws UsageError.
    std::chrono::microseconds loop_spin{50};
    /// The settings of the engine the URL picks (RedisOptions); empty = its defaults. Options
    /// of another engine: Client::connect throws UsageError.
    std::shared_ptr<const EngineOptions> engine{};
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
