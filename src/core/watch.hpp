// Waiting for something announced on channels (a latch opening, an election's change): the
// acquire state machine with look_only, driven by blocking I/O. Subscribe, look, wait; wake
// at the thing's expiry too, since an expiry announces nothing.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "deadbolt/acquire_options.hpp"
#include "net/status.hpp"

namespace deadbolt::detail {

struct ClientImpl;

/// What one look found.
struct Look {
    bool done = false;                  // what the watcher waits for has happened
    std::chrono::milliseconds ttl{-1};  // else: when it may change by itself (-1 = never)
};

/// Looks (after subscribing to channels) until look says done: true. False when how's
/// deadline passes or a stop is requested first. Connection errors are ridden out until the
/// deadline; other errors (look's Status, a failed subscription) are thrown as deadbolt
/// exceptions. Without wake-ups (Redlock's or a cluster's message node down) it looks again
/// every unarmed_recheck.
bool watch(ClientImpl& c, const std::vector<std::string>& channels,
           const std::function<Status(Look&)>& look, const AcquireOptions& how,
           std::chrono::milliseconds unarmed_recheck);

}  // namespace deadbolt::detail
