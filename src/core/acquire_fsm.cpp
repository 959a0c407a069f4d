#include "core/acquire_fsm.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/backoff.hpp"
#include "core/validity.hpp"

namespace deadbolt::detail {
namespace {

// Pauses between rides over a blip: short at first, never long (the server may be back).
constexpr std::chrono::milliseconds kBlipFirst{50};
constexpr std::chrono::milliseconds kBlipMost{250};
// Looks again after a refusal whose wake-up was spent (Attempted::wake_spent): the first soon
// (a node's release a round trip behind), doubling to a pace that costs a server nothing.
constexpr std::chrono::milliseconds kSpentWakeRecheck{10};
constexpr std::chrono::milliseconds kSpentWakeRecheckMax{1000};

bool is(const Status& st, errc e) {
    return st.ec == make_error_code(e);
}

}  // namespace

AcquireFsm::AcquireFsm(AcquireRules rules, Clock::time_point started)
    : rules_(std::move(rules)),
      started_(started),
      rng_(static_cast<std::minstd_rand::result_type>(rules_.seed % 2147483646 + 1)) {}

double AcquireFsm::uniform() {
    return std::uniform_real_distribution<double>(0.0, 1.0)(rng_);
}

Clock::time_point AcquireFsm::capped(Clock::time_point t) const {
    return rules_.deadline ? std::min(t, *rules_.deadline) : t;
}

WaitInfo AcquireFsm::info(Clock::time_point now, std::chrono::milliseconds pttl,
                          std::error_code retrying) const {
    return WaitInfo{std::chrono::duration_cast<std::chrono::milliseconds>(now - started_), pttl,
                    retrying};
}

Step AcquireFsm::start(Clock::time_point now) {
    // We just released this lock to waiting clients: give the one that was woken a moment to
    // take it rather than barging back in ahead of it (which starves other processes).
    if (rules_.yield_until && now < capped(*rules_.yield_until)) {
        yielding_ = true;
        return Step{.next = Next::subscribe};
    }
    return Step{};
}

// What a waiter with time left rides out: the server is away for a moment (restarting,
// failing over, loading), not refusing us.
bool AcquireFsm::rides_out(const Status& st, Clock::time_point now) const {
    if (!rules_.deadline || now >= *rules_.deadline) return false;
    for (errc e :
         {errc::connect_failed, errc::connection_lost, errc::timeout, errc::unknown_outcome,
          errc::readonly, errc::loading, errc::busy, errc::no_quorum, errc::not_replicated})
        if (is(st, e)) return true;
    return false;
}

Step AcquireFsm::pause(Step s, const Status& st, Clock::time_point now) {
    s.report = info(now, std::chrono::milliseconds(0), st.ec);
    s.next = Next::sleep;
    s.until = capped(now + jittered_backoff(blips_++, kBlipFirst, kBlipMost, uniform()));
    return s;
}

Step AcquireFsm::finish(Step s, Status why, Clock::time_point now) {
    s.unsubscribe = subscribed_;
    subscribed_ = false;
    // The caller's next attempt must not meet its own queue entry or claim.
    if (queued_ && rules_.abandons) s.abandon = Step::Cleanup{true, give_up(now)};
    s.next = Next::failed;
    s.status = std::move(why);
    return s;
}

Clock::time_point AcquireFsm::give_up(Clock::time_point from) const {
    return rules_.strays_live_on ? Clock::time_point::max() : from + rules_.px;
}

Step AcquireFsm::attempted(const Attempted& a, Clock::time_point now) {
    Step s;
    // A failed attempt may have left its release to the background (a node that did not
    // answer): the next attempt must not share its token, or that release would delete the
    // next grant. A writer's claim names the old token: drop it, the next attempt claims
    // afresh. So too when the attempt failed with an error: a Redlock round that too few
    // nodes answered (no_quorum) still sent its give-back, and a torture run caught the
    // retry's grant deleted by it while its caller held on.
    if (a.cleanup_pending && !rules_.fixed_owner) {
        if (rules_.abandons && rules_.waiter_names_token)
            s.abandon = Step::Cleanup{true, give_up(now)};
        s.new_token = true;
    }
    if (!a.status.ok()) {
        // After a lost reply we may hold the lock unknowingly: release it in the background,
        // retrying until it would have expired anyway. Not for a fixed owner: if the request
        // never ran, that release would take back a count of the owner's other holdings; its
        // grant, if any, expires by itself.
        bool unknown = is(a.status, errc::unknown_outcome);
        if (unknown && !rules_.fixed_owner) s.release = Step::Cleanup{false, give_up(a.sent_at)};
        // A fixed owner's lost grant would make a retry a re-entry: it stops here.
        if ((!unknown || !rules_.fixed_owner) && rides_out(a.status, now)) {
            if (unknown) {  // the cleanup must not delete our next grant: a new token
                if (queued_ && rules_.abandons) s.abandon = Step::Cleanup{false, give_up(now)};
                s.new_token = true;
                if (rules_.wakes_by_token && subscribed_) s.unsubscribe = true, subscribed_ = false;
            }
            return pause(std::move(s), a.status, now);
        }
        return finish(std::move(s), a.status, now);
    }
    blips_ = 0;
    if (a.acquired && rules_.look_only) {
        s.unsubscribe = subscribed_;
        subscribed_ = false;
        s.next = Next::granted;
        return s;
    }
    if (a.acquired) {
        auto from = a.kept_from ? std::min(*a.kept_from, a.sent_at) : a.sent_at;
        auto valid_until = validity_deadline(from, rules_.ttl);
        if (a.replied_at >= valid_until) {
            // The reply came too late to leave any validity (a stalled link): nobody may act
            // on this grant, so free it in the background and try afresh with a new token (the
            // cleanup must not delete our next acquisition). Its fence is unused. A fixed
            // owner's token cannot change, so such a release could take back its next grant:
            // its grant is left to the retry (which takes a leftover of the owner's over) or
            // to expire.
            if (!rules_.fixed_owner) {
                s.release = Step::Cleanup{false, give_up(a.sent_at)};
                s.new_token = true;
                if (rules_.wakes_by_token && subscribed_) s.unsubscribe = true, subscribed_ = false;
            }
            return s;  // attempt again
        }
        valid_until_ = valid_until;
        sent_at_ = a.sent_at;
        s.next = Next::confirm;
        return s;
    }
    queued_ = true;
    s.report = info(now, a.pttl);
    if (rules_.deadline && now >= *rules_.deadline)
        return finish(
            std::move(s),
            Status::error(errc::not_acquired,
                          a.pttl.count() >= 0
                              ? fmt::format("lock '{}' is held by someone else "
                                            "(expires in {} ms)",
                                            rules_.name, a.pttl.count())
                              : fmt::format("lock '{}' is held by someone else", rules_.name)),
            now);
    if (!subscribed_ && !sleep_instead_) {
        s.next = Next::subscribe;  // then try again: a release in between would go unnoticed
        return s;
    }
    // A key with no expiry (set by another tool) never frees by itself. One with an expiry
    // may free without a message: wake just after it, spread by the jitter.
    auto wake = Clock::time_point::max();
    if (a.pttl.count() >= 0)
        wake = now + a.pttl + std::chrono::milliseconds(1) +
               std::chrono::milliseconds(static_cast<std::int64_t>(
                   uniform() * static_cast<double>(rules_.wait_jitter.count() + 1)));
    else if (rules_.no_expiry_recheck.count() > 0)
        wake = now + rules_.no_expiry_recheck;
    if (rules_.refresh.count() > 0) wake = std::min(wake, now + rules_.refresh);
    if (sleep_instead_ && rules_.unarmed_recheck.count() > 0)
        wake = std::min(wake, now + rules_.unarmed_recheck);
    // The rest of the release is most likely on its way: look again soon, backing off so
    // that a node that lost the holding (a restart) does not make waiters poll fast.
    spent_ = a.wake_spent ? spent_ + 1 : 0;
    if (spent_ > 0)
        wake = std::min(wake, now + jittered_backoff(spent_ - 1, kSpentWakeRecheck,
                                                     kSpentWakeRecheckMax, uniform()));
    s.until = capped(wake);
    // Without wake-ups this once (the subscriber moves to another node meanwhile): a timed
    // sleep, and subscribe again after.
    s.next = sleep_instead_ ? Next::sleep : Next::wait;
    sleep_instead_ = false;
    return s;
}

Step AcquireFsm::subscribed(Status st, Clock::time_point now) {
    if (yielding_) {
        yielding_ = false;
        if (!st.ok()) return Step{};
        subscribed_ = true;
        return Step{.next = Next::wait, .until = capped(*rules_.yield_until)};
    }
    if (st.ok()) {
        subscribed_ = true;
        return Step{};
    }
    if (rules_.can_sleep_instead && !is(st, errc::cancelled)) {
        // The node that carries release messages is down: the other nodes may still make a
        // majority, and the subscriber moves to another node. Wake at the holder's expiry this
        // time.
        sleep_instead_ = true;
        return Step{};
    }
    if (rides_out(st, now)) return pause(Step{}, st, now);
    if (is(st, errc::timeout) && rules_.deadline && now >= *rules_.deadline)
        st = Status::error(errc::not_acquired,
                           fmt::format("lock '{}' is held by someone else", rules_.name));
    return finish(Step{}, std::move(st), now);
}

Step AcquireFsm::waited(Clock::time_point /*now*/) {
    yielding_ = false;
    return Step{};
}

Step AcquireFsm::confirmed(Status st, Clock::time_point now) {
    if (!st.ok()) {
        // Held on the primary only: a failover could hand it to someone else. A fixed owner's
        // release counts one hold down, whichever holding sends it: sent again after a lost
        // reply, it could take the count of the owner's other holdings.
        Step s;
        s.release = Step::Cleanup{true, give_up(sent_at_), rules_.fixed_owner};
        return finish(std::move(s), std::move(st), now);
    }
    Step s{.unsubscribe = subscribed_, .next = Next::granted, .until = valid_until_};
    subscribed_ = false;
    return s;
}

Step AcquireFsm::cancelled(Clock::time_point now) {
    return finish(Step{}, Status::error(errc::cancelled, "cancelled while waiting for the lock"),
                  now);
}

}  // namespace deadbolt::detail
