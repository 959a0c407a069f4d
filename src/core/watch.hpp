// Waiting for something the engine announces (a latch opening, an election's change): the
// acquire state machine with look_only, driven by blocking I/O. Arm, look, wait; wake at the
// thing's expiry too, since an expiry announces nothing.
#pragma once

#include <chrono>
#include <functional>

#include "core/status.hpp"
#include "core/store.hpp"
#include "deadbolt/acquire_options.hpp"

namespace deadbolt::detail {

/// What one look found.
struct Look {
    bool done = false;                  // what the watcher waits for has happened
    std::chrono::milliseconds ttl{-1};  // else: when it may change by itself (-1 = never)
    bool wake_spent = false;            // else: the change was announced already (Attempted's)
};

/// Looks (after arming waker) until look says done: true. False when how's deadline passes
/// or a stop is requested first. Connection errors are ridden out until the deadline; other
/// errors (look's Status, a wake-up that cannot be armed) are thrown as deadbolt exceptions.
/// When the wake-up can lapse (can_sleep_instead: Redlock's or a cluster's message node
/// down) it looks again every unarmed_recheck.
bool watch(const Store& store, Waker& waker, bool can_sleep_instead,
           const std::function<Status(Look&)>& look, const AcquireOptions& how,
           std::chrono::milliseconds unarmed_recheck);

}  // namespace deadbolt::detail
