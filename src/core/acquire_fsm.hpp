// The acquire loop as a state machine without I/O (DESIGN section 12, Boost.Redis's style):
// the driver does what each Step says and feeds back what happened. Every decision of waiting
// for a lock (validity, late grants, cleanup after an unknown outcome, riding out a blip,
// deadline, cancellation) lives here once, and unit tests reach every branch with no server.
// Waiting for anything else that is announced (a latch opening, a new leader) is the same
// machine with look_only set.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <system_error>

#include "core/status.hpp"
#include "core/validity.hpp"
#include "deadbolt/acquire_options.hpp"

namespace deadbolt::detail {

/// What one acquisition's machine must know, fixed when it starts.
struct AcquireRules {
    std::string name{};                // for messages
    std::chrono::milliseconds ttl{0};  // a grant is valid for ttl from its attempt
    std::chrono::milliseconds px{0};   // how long a stray grant can live on the server
    // A stray grant or waiter's place lives as long as the client keeps its session alive
    // (etcd's shared lease), not px: its cleanup goes on until it succeeds.
    bool strays_live_on = false;
    std::optional<Clock::time_point> deadline{};  // give up here; nullopt = never
    std::chrono::milliseconds refresh{0};         // look again at least this often (0 = no need)
    std::chrono::milliseconds wait_jitter{0};     // spread waiters' wake-ups at a holder's expiry
    bool fixed_owner = false;        // the token is an owner id: never replaced, never cleaned up
    bool abandons = false;           // a waiter leaves state on the server to abandon on giving up
    bool waiter_names_token = true;  // ...which a new token drops too (ClaimTraits)
    bool wakes_by_token = false;     // wake-ups are addressed to the token (a FairMutex grant)
    bool can_sleep_instead = false;  // wake-ups may be away for a moment (Redlock, Cluster)
    std::optional<Clock::time_point> yield_until{};  // we just handed this lock over: wait first
    // A look, not a claim (a latch's opening, an election's change): an attempt that finds
    // what it waits for is the end, with no validity, replication or cleanup.
    bool look_only = false;
    // A holder with no expiry: look again this often (0 = wait for a message alone).
    std::chrono::milliseconds no_expiry_recheck{1000};
    // Without wake-ups: look again at least this often (0 = at the holder's expiry).
    std::chrono::milliseconds unarmed_recheck{0};
    std::uint64_t seed = 0;  // for jitter and backoff
};

/// What an attempt came back with.
struct Attempted {
    Status status{};                    // not ok: no answer (unknown_outcome: sent, reply lost)
    bool acquired = false;              // granted
    std::chrono::milliseconds pttl{0};  // refused: the holder's remaining TTL (-1 = none)
    bool cleanup_pending = false;       // part of a failed grant is still being undone
    // Refused, but the node that carries wake-ups has already let go (Redlock): its message
    // for this release is spent, and the nodes still holding tell only their own subscribers.
    bool wake_spent = false;
    Clock::time_point sent_at{};     // the client's clock before sending
    Clock::time_point replied_at{};  // the client's clock at the reply
    // Granted: when the engine's keeping of it began, if before sent_at (a session lease
    // last renewed then keeps the new key); validity runs from the earlier of the two.
    std::optional<Clock::time_point> kept_from{};
};

/// What the driver does next, after the effects.
enum class Next {
    attempt,    // try once with the current token (first: a stop request ends it, cancelled())
    subscribe,  // arm the wake-up, then subscribed()
    wait,       // until `until` or a wake-up or a stop request, then waited()
    sleep,      // until `until` or a stop request (no wake-up), then waited()
    confirm,    // confirm the grant is replicated, then confirmed()
    granted,    // done: the last attempt's grant is a lease valid until `until`
    failed,     // done: `status` says why
};

/// One step: side effects in this order (each with the token current before new_token), then
/// the next thing to do.
struct Step {
    struct Cleanup {
        bool now = false;             // at once (falling back to the background), else background
        Clock::time_point give_up{};  // the client's clock: by then it has expired anyway
        bool once = false;  // now, and never again: a fixed owner's release counts a hold down
    };
    std::optional<Cleanup> release{};  // release what the last attempt may hold
    std::optional<Cleanup> abandon{};  // drop our waiter's state (queue entry, writer's claim)
    bool new_token = false;            // the next attempt must not share the old token
    bool unsubscribe = false;
    std::optional<WaitInfo> report{};  // tell the caller how the wait goes
    Next next = Next::attempt;
    Clock::time_point until{};  // wait, sleep; granted: valid until (client's clock)
    Status status{};            // failed
};

class AcquireFsm {
  public:
    explicit AcquireFsm(AcquireRules rules, Clock::time_point started);

    /// The first step.
    Step start(Clock::time_point now);
    Step attempted(const Attempted& a, Clock::time_point now);
    Step subscribed(Status s, Clock::time_point now);
    Step waited(Clock::time_point now);
    Step confirmed(Status s, Clock::time_point now);
    /// A stop request before an attempt: gives up, leaving nothing behind.
    Step cancelled(Clock::time_point now);

    bool armed() const { return subscribed_; }

  private:
    Step finish(Step s, Status why, Clock::time_point now);
    bool rides_out(const Status& st, Clock::time_point now) const;
    Step pause(Step s, const Status& st, Clock::time_point now);
    WaitInfo info(Clock::time_point now, std::chrono::milliseconds pttl,
                  std::error_code retrying = {}) const;
    Clock::time_point capped(Clock::time_point t) const;
    double uniform();

    // When the cleanup of a stray made at `from` may give up: when it would have expired.
    Clock::time_point give_up(Clock::time_point from) const;
    AcquireRules rules_;
    Clock::time_point started_;
    std::minstd_rand rng_;
    bool yielding_ = false;       // waiting out a handoff before the first attempt
    bool subscribed_ = false;     // the wake-up is armed
    unsigned spent_ = 0;          // refusals in a row with the wake-up spent: how far to back off
    bool sleep_instead_ = false;  // it could not be armed: wake at the holder's expiry once
    bool queued_ = false;         // the server may know us as a waiter
    unsigned blips_ = 0;          // connection errors ridden out in a row
    Clock::time_point valid_until_{};
    Clock::time_point sent_at_{};
};

}  // namespace deadbolt::detail
