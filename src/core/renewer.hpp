// Renewer (the watchdog): keeps auto-renewed leases alive and notices lost ones.
//
// One thread per client and one schedule for all its leases. Every renewal due within a
// short window goes out in one pipeline, so 100k leases cost a few round trips per period,
// not 100k. A refused renewal means lost now; a transport error is retried until the local
// validity deadline, then the lease is lost. Leases without auto-renewal are watched too, so
// their stop token fires when their validity runs out.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "core/background.hpp"
#include "core/lease_state.hpp"
#include "core/store.hpp"

namespace deadbolt::detail {

class Renewer : public std::enable_shared_from_this<Renewer> {
  public:
    /// clock: the one leases are measured on (empty = Clock::now); schedules and validity
    /// use it, request deadlines do not.
    Renewer(std::shared_ptr<Store> store, LeaseClock clock);
    ~Renewer();

    void add(const std::shared_ptr<LeaseState>& lease);
    void remove(const LeaseState* lease);
    /// What a background release learned: yes (it was ours, released now), no (not ours:
    /// gone or another's), unknown (no answer before give_up).
    using Settled = std::function<void(Verdict::Is)>;
    /// Releases h (what a lost reply may have left us holding unknowingly, or a waiter's
    /// state) in the background until the engine answers, or until give_up, when it has
    /// expired anyway; then calls settled (if any) once, on the renewer's thread.
    void add_cleanup(std::shared_ptr<const Holding> h, Clock::time_point give_up,
                     Settled settled = {});
    /// Asks the engine, on the renewer's thread and soon, whether each lease that concerns says
    /// is concerned (empty: all) is still held (it may have dropped some by itself: a
    /// failover, a session expiry) and reports those it does not hold as lost (not_owner). It
    /// never blocks the caller (an engine's event thread). Never throws.
    void doubt(Store::Concerns concerns) noexcept;
    /// Stops the thread; joins it unless called from the thread itself (then it detaches).
    void stop();

    /// The name its thread goes by.
    static constexpr const char* kThreadName = "deadbolt-renew";

    /// Renewal period of o: renew_every, or ttl / 3.
    static std::chrono::milliseconds period(const MutexOptions& o);

  private:
    using Schedule = std::multimap<Clock::time_point, const LeaseState*>;
    struct Entry {
        std::shared_ptr<LeaseState> lease;
        Clock::time_point hold_until;  // max_hold bound (time_point::max() = none)
        Schedule::iterator at;         // its place in schedule_; end() while renewing
    };

    struct Cleanup {
        std::shared_ptr<const Holding> holding;
        Clock::time_point give_up, next_at;
        unsigned attempts = 0;
        Settled settled;
    };

    void start_locked();
    void run();
    void verify(const std::vector<Store::Concerns>& which) noexcept;
    void run_cleanups(std::unique_lock<std::mutex>& lk);
    using Leases = std::map<const LeaseState*, Entry>;
    // Puts e in schedule_ at `at` (moving its node there if it has one).
    void schedule_locked(Entry& e, Clock::time_point at);
    // Takes e out of schedule_; its node is kept for the next.
    void unschedule_locked(Entry& e);
    // Drops a lease (and its place in schedule_); its node is kept for the next.
    void forget_locked(Leases::iterator it);
    void renew(std::vector<std::shared_ptr<LeaseState>>& batch);

    std::shared_ptr<Store> store_;
    LeaseClock clock_;
    std::mutex m_;
    std::condition_variable cv_;
    Leases leases_;
    Schedule schedule_;  // next renewal or expiry check of each lease
    // Nodes of dropped leases and of their places: every acquisition adds a lease and every
    // release drops it, and the two nodes were two allocations per turn.
    std::vector<Leases::node_type> spare_leases_;
    std::vector<Schedule::node_type> spare_places_;
    std::vector<Cleanup> cleanups_;
    std::vector<Store::Concerns> doubts_;  // doubt() calls the thread has yet to act on
    Clock::time_point sleeping_until_ = Clock::time_point::min();  // the thread's next wake-up
    // When the thread would have woken for the leases dropped since: with none left it sleeps
    // until then rather than for ever, so that a client locking and unlocking one name over
    // and over does not wake it at every acquisition (a futex and a context switch each).
    Clock::time_point dropped_until_ = Clock::time_point::min();
    bool stopping_ = false;
    Background thread_;
};

}  // namespace deadbolt::detail
