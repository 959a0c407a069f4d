// Events: what happens to each lock, told to an observer (ClientOptions::observer) as it
// happens, for metrics and logs.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string_view>
#include <system_error>

namespace deadbolt {

/// What happened.
enum class LockEventKind {
    refused,          ///< An attempt found the lock held (by another client, or another
                      ///< thread of this one, which lines up in the process first); the
                      ///< caller waits (or gives up).
    granted,          ///< An acquisition succeeded (fence set; waited = time it took).
    unknown_outcome,  ///< An attempt's reply was lost: it may have been granted; cleaned up.
    retrying,         ///< A waiter rides out a connection error until its deadline.
    gave_up,          ///< An acquisition ended without the lock (error says why).
    renewed,          ///< A renewal extended the lease.
    renew_failed,     ///< A renewal got no answer; it is retried while the lease is valid.
    lost,             ///< The lease was lost (error says why); on_lost runs too.
    released,         ///< The holder released it (error set when it was no longer ours).
};

/// One event. The string views live only during the call.
struct LockEvent {
    LockEventKind kind = LockEventKind::refused;
    std::string_view name{};             ///< The lock's name (a MultiLock: its names joined).
    std::string_view primitive{};        ///< "mutex", "fair", "read", "write", "reentrant",
                                         ///< "semaphore", "multi" or "leader".
    std::chrono::microseconds took{};    ///< The round trip: attempt, renewal or release.
    std::chrono::milliseconds waited{};  ///< Since the acquisition began (acquire events).
    std::uint64_t fence = 0;             ///< granted: the fence (0 for shared holdings).
    std::error_code error{};             ///< Why, for the failure kinds.
    /// Acquire events: the refusals this acquisition met so far (a refused event counts its
    /// own), so an observer can tell when a caller starts waiting (the first) and whether it
    /// had waited when it ends (granted, gave_up).
    std::uint32_t refusals = 0;
    /// lost, released: how long the lease was held, from its grant (on ClientOptions::clock).
    std::chrono::microseconds held{};
    /// lost, released: this event ended the holding (the first of the two for a lease; a
    /// released lease found lost afterwards, or a lost one released, tells the second with
    /// ended false), so counting holders is granted minus ended.
    bool ended = false;
};

/// Hears every event of a client's locks on the thread that did the work (the caller's, or
/// the client's renewer thread): keep it short and do not block. What it throws is ignored.
using LockObserver = std::function<void(const LockEvent&)>;

}  // namespace deadbolt
