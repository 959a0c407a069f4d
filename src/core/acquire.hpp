// The acquire loop shared by every primitive (DESIGN sections 6-7): local queue, one attempt,
// then sleep until a release message, the holder's expiry or a refresh, whichever is first.
// A primitive says only which scripts and keys it uses; waiting, validity, late grants, lost
// replies and cancellation are handled here once.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "deadbolt/options.hpp"
#include "net/status.hpp"
#include "redis/scripts.hpp"

namespace deadbolt {
struct AcquireOptions;
class Lease;
}  // namespace deadbolt

namespace deadbolt::detail {

struct ClientImpl;

struct AcquireSpec {
    std::string name;                 // the caller's name: messages and Lease::name()
    const char* primitive = "mutex";  // what events call it (LockEvent::primitive)
    MutexOptions options;             // ttl, renewal, lock_delay, jitter, on_lost
    const Script* script = nullptr;   // KEYS: keys; ARGV: token, px, fence_px, args...
    std::vector<std::string> keys;
    std::vector<std::string> args;
    bool fenced = true;               // grants carry a fence (exclusive holdings)
    const LeaseKind* kind = nullptr;  // renews, releases and checks what was granted
    std::vector<std::string> op_keys;
    std::vector<std::string> op_args;
    std::string channel;                      // releases are announced here; waiters sleep on it
    std::vector<std::string> extra_channels;  // ...and on these too (a MultiLock's other names)
    std::vector<std::string> names;           // a MultiLock's names, in the order of its fences
    std::string grant_prefix;                 // non-empty: sleep on grant_prefix + token instead (a
                               // release grants the lock to one waiter and wakes it alone)
    std::string queue_key;  // threads of this process line up on it; empty = none
    std::string owner;      // fixed token (an owner id); empty = random per acquisition
    bool reentry = false;   // the caller holds it already (a ReentrantMutex re-entry)
    std::chrono::milliseconds refresh{0};  // retry at least this often while waiting, to keep
                                           // a queue entry or a writer's claim alive
    const Script* abandon = nullptr;       // run (op convention) when a waiter gives up
    std::vector<std::string> abandon_keys;
};

/// Runs the acquire loop for spec. Returns an empty Lease and a Status on failure.
Lease acquire_lease(const std::shared_ptr<ClientImpl>& client, const AcquireSpec& spec,
                    const AcquireOptions& how, Status& status);

}  // namespace deadbolt::detail
