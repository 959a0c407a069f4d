// LeaseState: what one holding shares between its Lease handle, the renewer and unlock().
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>

#include "core/status.hpp"
#include "core/store.hpp"
#include "deadbolt/events.hpp"
#include "deadbolt/options.hpp"

namespace deadbolt::detail {

struct ClientImpl;
using Clock = std::chrono::steady_clock;
/// The clock leases are measured on (ClientOptions::clock); empty means Clock::now.
using LeaseClock = std::function<Clock::time_point()>;
inline Clock::time_point now_on(const LeaseClock& clock) {
    return clock ? clock() : Clock::now();
}

/// A release's final outcome, for whoever waits for it (Lease::settle).
struct Settlement {
    std::mutex m;
    std::condition_variable cv;
    bool settled = false;  // final: answered, or given up
    Status outcome;

    /// Records the outcome once and wakes the waiters. Never throws.
    void settle_as(Status o) noexcept;
    /// That outcome once final, or unknown_outcome at deadline. Never throws.
    std::error_code wait_until(Clock::time_point deadline) noexcept;
};

struct LeaseState : std::enable_shared_from_this<LeaseState> {
    std::shared_ptr<ClientImpl> client;
    std::string name;
    const char* primitive = "mutex";         // LockEvent::primitive
    std::shared_ptr<const Holding> holding;  // the engine's record: what it extends, releases
    SharedText handoff_key;                  // where a release's handoff is noted
    bool hands_off = false;                  // a release that woke waiters lets them go first
    SharedText local_line;                   // this process's local queue line; null = none
    std::string token;
    std::uint64_t fence = 0;
    std::vector<std::string> names;     // a MultiLock's names; empty for one name
    std::vector<std::uint64_t> fences;  // a MultiLock's fence per name, in names' order
    MutexOptions options;
    std::chrono::milliseconds px{0};  // how long the engine keeps it: ttl + lock_delay
    Clock::time_point acquired_at;    // when the acquiring request was sent
    std::string owner;                // a ReentrantMutex's holding: its owner; else empty
    bool owner_only_here = false;     // that owner is the client's default one

    std::atomic<Clock::rep> valid_until_rep{0};
    std::atomic<bool> lost{false};
    std::atomic<bool> released{false};
    std::atomic<bool> left_queue{false};  // this process's other threads may try again
    std::atomic<bool> ended{false};       // a lost or released event told the holding's end
    // Made when someone first asks for the stop token (stop_token()), under stop_m: most
    // holdings never do, and making it was an allocation per acquisition.
    std::mutex stop_m;
    std::stop_source stop{std::nostopstate};

    // What the release learned (Lease::settle): settled by release() itself, or, after a lost
    // reply, by the renewer's background release in `later`. That one is apart from this state
    // so the renewer's thread can let go of the lease before it wakes the waiter: a waiter that
    // then drops the last handle and exits must not leave the client to end on that thread
    // during the exit (a SIGSEGV of `deadbolt run` once, after "asking again").
    Settlement settlement;
    std::shared_ptr<Settlement> later;  // under settlement.m; set instead of settling

    Clock::time_point valid_until() const {
        return Clock::time_point(Clock::duration(valid_until_rep.load(std::memory_order_acquire)));
    }
    void set_valid_until(Clock::time_point t) {
        valid_until_rep.store(t.time_since_epoch().count(), std::memory_order_release);
    }

    /// The event of the holding's loss or release: held so far, and whether it ends it.
    LockEvent end_event(LockEventKind kind, std::error_code error) noexcept;

    /// The token that is requested when the lease is lost (already requested if it is).
    /// Throws std::bad_alloc when there is no memory to make it.
    std::stop_token stop_token();

    /// Marks the lease lost once: requests the stop token and calls on_lost. Never throws.
    void mark_lost(std::error_code why) noexcept;

    /// Whether this holding's release, sent again after its reply was lost, could count down
    /// another holding: a re-entry's release takes one of its owner's holds, whichever holding
    /// sends it, and the owner may still hold it (here, or, for an owner given by the user,
    /// through other clients).
    bool release_may_take_another() const;

    /// Lets the next local thread try: on release, and on loss (a stuck holder thread must
    /// not block the rest of its process once its lease is gone).
    void leave_local_queue() noexcept;

    /// Releases it on the engine; leaves the local queue. Idempotent; never throws.
    Status release() noexcept;
    /// What a release that started at started and got v means, for both the blocking and the
    /// asynchronous release: a cleanup when unknown, the handoff, the event. Never throws.
    Status released_as(Verdict v, Clock::time_point started) noexcept;

    /// The error of a release that found the holding not ours.
    Status not_ours_at_release() const;
    /// Waits until the release's outcome is final, or deadline: that outcome, or
    /// unknown_outcome. Never throws.
    std::error_code settle(Clock::time_point deadline) noexcept;

    /// Keeps it for ttl (+ lock_delay) more if it is still ours; moves valid_until on success.
    Status extend(std::chrono::milliseconds ttl) noexcept;

    /// Asks the engine whether it is still ours.
    Status is_current(bool& current) const noexcept;
    /// Writes value under key only if it is still ours, in one step on the engine; a lease
    /// found not ours is lost.
    Status put_if_current(std::string_view key, std::string_view value, bool& put) noexcept;
};

}  // namespace deadbolt::detail
