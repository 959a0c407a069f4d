// LeaseState: what one holding shares between its Lease handle, the renewer and unlock().
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>

#include "deadbolt/options.hpp"
#include "net/status.hpp"
#include "redis/commands.hpp"

namespace deadbolt::detail {

struct ClientImpl;
using Clock = std::chrono::steady_clock;
/// The clock leases are measured on (ClientOptions::clock); empty means Clock::now.
using LeaseClock = std::function<Clock::time_point()>;
inline Clock::time_point now_on(const LeaseClock& clock) {
    return clock ? clock() : Clock::now();
}

struct LeaseState {
    std::shared_ptr<ClientImpl> client;
    std::string name;
    const char* primitive = "mutex";   // LockEvent::primitive
    const LeaseKind* kind = nullptr;   // the scripts that renew, release and check it
    std::vector<std::string> op_keys;  // KEYS of kind's scripts
    std::vector<std::string> op_args;  // ARGV of kind's scripts after {token, channel, px}
    std::string channel;               // where its release is announced
    std::string queue_key;             // this process's local queue line; empty = none
    std::string token;
    std::uint64_t fence = 0;
    std::vector<std::string> names;     // a MultiLock's names; empty for one name
    std::vector<std::uint64_t> fences;  // a MultiLock's fence per name, in names' order
    MutexOptions options;
    std::chrono::milliseconds px{0};  // server-side expiry: ttl + lock_delay
    Clock::time_point acquired_at;    // when the acquiring request was sent

    std::atomic<Clock::rep> valid_until_rep{0};
    std::atomic<bool> lost{false};
    std::atomic<bool> released{false};
    std::atomic<bool> left_queue{false};  // this process's other threads may try again
    std::stop_source stop;

    Clock::time_point valid_until() const {
        return Clock::time_point(Clock::duration(valid_until_rep.load(std::memory_order_acquire)));
    }
    void set_valid_until(Clock::time_point t) {
        valid_until_rep.store(t.time_since_epoch().count(), std::memory_order_release);
    }

    /// Marks the lease lost once: requests the stop token and calls on_lost. Never throws.
    void mark_lost(std::error_code why) noexcept;

    /// Lets the next local thread try: on release, and on loss (a stuck holder thread must
    /// not block the rest of its process once its lease is gone).
    void leave_local_queue() noexcept;

    /// Server-side release; leaves the local queue. Idempotent; never throws.
    Status release() noexcept;

    /// CAS PEXPIRE to ttl (+ lock_delay); moves valid_until on success.
    Status extend(std::chrono::milliseconds ttl) noexcept;

    /// Asks the server whether the key still holds our token.
    Status is_current(bool& current) const noexcept;

    /// A call of one of kind's scripts for this lease, with the server expiry px.
    OwnedCall op(const Script& script, std::chrono::milliseconds px) const;
    /// The same call as views into this lease (no copies: the renewal pipeline's hot path);
    /// px_s must outlive the returned call.
    ScriptCall view(const Script& script, const std::string& px_s) const;
};

}  // namespace deadbolt::detail
