// The acquire state machine, driven through every branch with no server: what it asks the
// driver to do after each thing that can happen to an attempt.
#include <gtest/gtest.h>

#include "core/acquire_fsm.hpp"

using namespace std::chrono_literals;
using deadbolt::errc;
using deadbolt::detail::AcquireFsm;
using deadbolt::detail::AcquireRules;
using deadbolt::detail::Attempted;
using deadbolt::detail::Clock;
using deadbolt::detail::Next;
using deadbolt::detail::Status;
using deadbolt::detail::Step;

namespace {

const Clock::time_point t0 = Clock::time_point{} + 1h;

AcquireRules rules(std::optional<Clock::duration> wait = std::nullopt) {
    AcquireRules r;
    r.name = "job";
    r.ttl = 10s;
    r.px = 10s;
    if (wait) r.deadline = t0 + *wait;
    r.seed = 7;
    return r;
}

// A kind whose waiters leave state on the server (a queue entry, a writer's claim).
AcquireRules abandoning(std::optional<Clock::duration> wait = std::nullopt) {
    auto r = rules(wait);
    r.abandons = true;
    return r;
}

Attempted granted(Clock::time_point sent, Clock::duration took = 1ms) {
    Attempted a;
    a.acquired = true;
    a.sent_at = sent;
    a.replied_at = sent + took;
    return a;
}

Attempted refused(std::chrono::milliseconds pttl, Clock::time_point at = t0) {
    Attempted a;
    a.pttl = pttl;
    a.sent_at = at;
    a.replied_at = at + 1ms;
    return a;
}

Attempted failed(errc e, Clock::time_point at = t0) {
    Attempted a;
    a.status = Status::error(e, "boom");
    a.sent_at = at;
    a.replied_at = at;
    return a;
}

bool no_effects(const Step& s) {
    return !s.release && !s.abandon && !s.new_token && !s.unsubscribe;
}

}  // namespace

TEST(AcquireFsm, GrantedAtOnceIsValidForTtlLessDriftFromTheAttempt) {
    AcquireFsm m(rules(), t0);
    auto s = m.start(t0);
    EXPECT_EQ(s.next, Next::attempt);
    s = m.attempted(granted(t0), t0);
    EXPECT_EQ(s.next, Next::confirm);
    EXPECT_TRUE(no_effects(s));
    s = m.confirmed({}, t0);
    EXPECT_EQ(s.next, Next::granted);
    EXPECT_GT(s.until, t0 + 9s);
    EXPECT_LT(s.until, t0 + 10s);  // the drift margin is taken off
    EXPECT_FALSE(s.unsubscribe);   // it never subscribed
}

TEST(AcquireFsm, AGrantKeptByASessionIsValidFromTheSessionsLastRenewal) {
    AcquireFsm m(rules(), t0);
    m.start(t0);
    auto a = granted(t0);
    a.kept_from = t0 - 4s;  // the lease the key went on was last kept alive then
    m.attempted(a, t0);
    auto s = m.confirmed({}, t0);
    EXPECT_GT(s.until, t0 + 5s);
    EXPECT_LT(s.until, t0 + 6s);
    AcquireFsm later(rules(), t0);
    later.start(t0);
    a.kept_from = t0 + 1s;  // granted on a lease made after sending: the send time rules
    later.attempted(a, t0);
    EXPECT_LT(later.confirmed({}, t0).until, t0 + 10s);
}

TEST(AcquireFsm, AnAnnouncedExpiryNeedsNoTimedLook) {
    auto r = rules();
    r.no_expiry_recheck = 0ms;  // the engine's wake-up also fires when the holder expires
    AcquireFsm m(r, t0);
    m.start(t0);
    m.attempted(refused(-1ms), t0);
    m.subscribed({}, t0);
    auto s = m.attempted(refused(-1ms), t0);
    EXPECT_EQ(s.next, Next::wait);
    EXPECT_EQ(s.until, Clock::time_point::max()) << "no deadline, no expiry: only a wake-up";
}

TEST(AcquireFsm, RefusedSubscribesThenLooksAgainThenWaitsUntilTheHolderExpires) {
    std::vector<deadbolt::WaitInfo> reports;
    AcquireFsm m(rules(), t0);
    m.start(t0);
    auto s = m.attempted(refused(3000ms), t0 + 5ms);
    ASSERT_TRUE(s.report);
    EXPECT_EQ(s.report->holder_ttl, 3000ms);
    EXPECT_EQ(s.report->waited, 5ms);
    EXPECT_EQ(s.next, Next::subscribe);
    // Subscribed: attempt again before sleeping (a release in between would go unnoticed).
    s = m.subscribed({}, t0 + 6ms);
    EXPECT_EQ(s.next, Next::attempt);
    EXPECT_TRUE(m.armed());
    s = m.attempted(refused(2990ms), t0 + 7ms);
    EXPECT_EQ(s.next, Next::wait);
    EXPECT_EQ(s.until, t0 + 7ms + 2990ms + 1ms);  // just after it expires; no jitter asked
    // Woken by a release: look again; granted this time, and the wake-up is dropped.
    s = m.waited(t0 + 100ms);
    EXPECT_EQ(s.next, Next::attempt);
    s = m.attempted(granted(t0 + 100ms), t0 + 101ms);
    s = m.confirmed({}, t0 + 102ms);
    EXPECT_EQ(s.next, Next::granted);
    EXPECT_TRUE(s.unsubscribe);
    EXPECT_FALSE(s.abandon) << "a grant leaves the waiter's state to the lease";
}

TEST(AcquireFsm, WaitJitterAndRefreshAndNoExpiryBoundTheWait) {
    auto r = rules();
    r.wait_jitter = 50ms;
    r.refresh = 200ms;
    AcquireFsm m(r, t0);
    m.start(t0);
    m.attempted(refused(1000ms), t0);
    m.subscribed({}, t0);
    auto s = m.attempted(refused(100ms), t0);
    EXPECT_GE(s.until, t0 + 101ms);
    EXPECT_LE(s.until, t0 + 152ms);
    s = m.attempted(refused(5000ms), t0);  // refresh comes first
    EXPECT_EQ(s.until, t0 + 200ms);
    AcquireFsm plain(rules(), t0);
    plain.start(t0);
    plain.attempted(refused(-1ms), t0);
    plain.subscribed({}, t0);
    s = plain.attempted(refused(-1ms), t0);  // a key with no expiry: look again in a second
    EXPECT_EQ(s.next, Next::wait);
    EXPECT_EQ(s.until, t0 + 1s);
}

TEST(AcquireFsm, ASpentWakeUpLooksAgainSoonBackingOffUntilOneIsNot) {
    AcquireFsm m(rules(), t0);
    m.start(t0);
    m.attempted(refused(30000ms), t0);
    m.subscribed({}, t0);
    auto spent = [](Clock::time_point at) {
        auto a = refused(30000ms, at);
        a.wake_spent = true;
        return a;
    };
    // The message node let go first: no message is coming for the rest of the release.
    auto s = m.attempted(spent(t0), t0);
    EXPECT_EQ(s.next, Next::wait);
    EXPECT_GE(s.until, t0 + 5ms);
    EXPECT_LE(s.until, t0 + 10ms);
    Clock::duration last = s.until - t0;
    for (int i = 0; i < 12; ++i) {
        s = m.attempted(spent(t0), t0);
        EXPECT_GE(s.until - t0, last / 2) << "it backs off";
        EXPECT_LE(s.until, t0 + 1000ms) << "never slower than a second";
        last = s.until - t0;
    }
    EXPECT_GE(last, 500ms);
    // A refusal with its wake-up to come waits for it (or the expiry) again.
    s = m.attempted(refused(30000ms), t0);
    EXPECT_EQ(s.until, t0 + 30001ms);
    s = m.attempted(spent(t0), t0);
    EXPECT_LE(s.until, t0 + 10ms) << "a new spell starts from the first step";
}

TEST(AcquireFsm, TheDeadlineEndsTheWaitAndCapsEverySleep) {
    AcquireFsm m(abandoning(300ms), t0);
    m.start(t0);
    m.attempted(refused(5000ms), t0);
    m.subscribed({}, t0);
    auto s = m.attempted(refused(5000ms), t0);
    EXPECT_EQ(s.until, t0 + 300ms);
    s = m.attempted(refused(4700ms), t0 + 300ms);
    EXPECT_EQ(s.next, Next::failed);
    EXPECT_EQ(s.status.ec, make_error_code(errc::not_acquired));
    EXPECT_NE(s.status.detail.find("lock 'job' is held by someone else (expires in 4700 ms)"),
              std::string::npos)
        << s.status.detail;
    EXPECT_TRUE(s.unsubscribe);
    ASSERT_TRUE(s.abandon) << "a queued waiter that gives up leaves no entry behind";
    EXPECT_TRUE(s.abandon->now);
}

TEST(AcquireFsm, TryOnceWithAPastDeadlineNeverSubscribes) {
    AcquireFsm m(rules(0ms), t0);
    m.start(t0);
    auto s = m.attempted(refused(1000ms), t0);
    EXPECT_EQ(s.next, Next::failed);
    EXPECT_FALSE(s.unsubscribe);
    EXPECT_FALSE(s.abandon) << "nothing to abandon: this kind leaves no waiter state";
}

TEST(AcquireFsm, ALateGrantIsFreedInTheBackgroundAndRetriedWithANewToken) {
    AcquireFsm m(rules(), t0);
    m.start(t0);
    // The reply came after the whole TTL less drift: nobody may act on it.
    auto s = m.attempted(granted(t0, 10s), t0 + 10s);
    EXPECT_EQ(s.next, Next::attempt);
    ASSERT_TRUE(s.release);
    EXPECT_FALSE(s.release->now);
    EXPECT_EQ(s.release->give_up, t0 + 10s);  // sent_at + px: it has expired by then
    EXPECT_TRUE(s.new_token) << "the cleanup must not delete the next grant";
    // A fixed owner keeps its token (a reentrant owner id) and simply tries again.
    auto r = rules();
    r.fixed_owner = true;
    AcquireFsm owner(r, t0);
    owner.start(t0);
    s = owner.attempted(granted(t0, 10s), t0 + 10s);
    EXPECT_EQ(s.next, Next::attempt);
    // A release under that token could take back the retry's grant: none (the retry takes
    // the leftover over, or it expires).
    EXPECT_FALSE(s.release) << "it would delete the owner's next grant";
    EXPECT_FALSE(s.new_token);
}

TEST(AcquireFsm, AnUnknownOutcomeIsCleanedUpAndWithTimeLeftRiddenOutWithANewToken) {
    auto r = rules(5s);
    r.abandons = true;
    r.wakes_by_token = true;
    AcquireFsm m(r, t0);
    m.start(t0);
    m.attempted(refused(1000ms), t0);  // queued
    m.subscribed({}, t0);              // on a channel named after the token
    auto s = m.attempted(failed(errc::unknown_outcome, t0 + 1ms), t0 + 2ms);
    ASSERT_TRUE(s.release);
    EXPECT_FALSE(s.release->now);
    EXPECT_EQ(s.release->give_up, t0 + 1ms + 10s);
    ASSERT_TRUE(s.abandon);
    EXPECT_FALSE(s.abandon->now);
    EXPECT_TRUE(s.new_token);
    EXPECT_TRUE(s.unsubscribe) << "grants name the old token";
    EXPECT_FALSE(m.armed());
    ASSERT_TRUE(s.report);
    EXPECT_EQ(s.report->retrying, make_error_code(errc::unknown_outcome));
    EXPECT_EQ(s.next, Next::sleep);
    EXPECT_GE(s.until, t0 + 2ms + 25ms);
    EXPECT_LE(s.until, t0 + 2ms + 50ms);
    // Without a deadline it ends there, the cleanup still queued.
    AcquireFsm once(rules(), t0);
    once.start(t0);
    s = once.attempted(failed(errc::unknown_outcome), t0);
    EXPECT_EQ(s.next, Next::failed);
    EXPECT_EQ(s.status.ec, make_error_code(errc::unknown_outcome));
    EXPECT_TRUE(s.release);
}

TEST(AcquireFsm, AStrayThatLivesWithTheSessionIsCleanedUpWithoutGivingUp) {
    // etcd: a lost grant's key sits on a lease the client keeps alive, not for px.
    auto r = rules(5s);
    r.abandons = true;
    r.strays_live_on = true;
    AcquireFsm m(r, t0);
    m.start(t0);
    m.attempted(refused(1000ms), t0);  // queued
    auto s = m.attempted(failed(errc::unknown_outcome, t0 + 1ms), t0 + 2ms);
    ASSERT_TRUE(s.release);
    EXPECT_EQ(s.release->give_up, Clock::time_point::max());
    ASSERT_TRUE(s.abandon);
    EXPECT_EQ(s.abandon->give_up, Clock::time_point::max());
}

TEST(AcquireFsm, AFixedOwnersUnknownOutcomeStopsWithoutCleanup) {
    auto r = rules(5s);
    r.fixed_owner = true;
    AcquireFsm m(r, t0);
    m.start(t0);
    auto s = m.attempted(failed(errc::unknown_outcome), t0);
    EXPECT_EQ(s.next, Next::failed) << "a retry would be a re-entry";
    EXPECT_FALSE(s.release) << "it would take back a count of the owner's other holdings";
    // Other blips it rides out like anyone.
    AcquireFsm again(r, t0);
    again.start(t0);
    EXPECT_EQ(again.attempted(failed(errc::connect_failed), t0).next, Next::sleep);
}

TEST(AcquireFsm, BlipsBackOffUntilTheDeadlineAndRefusalsAreNotRiddenOut) {
    AcquireFsm m(rules(1s), t0);
    m.start(t0);
    auto now = t0;
    Clock::duration last{};
    for (int i = 0; i < 4; ++i) {
        auto s = m.attempted(failed(errc::connection_lost, now), now);
        ASSERT_EQ(s.next, Next::sleep);
        EXPECT_FALSE(s.new_token) << "nothing was sent: the token cannot be held";
        EXPECT_GE(s.until - now, last / 2) << "backoff does not shrink below half";
        EXPECT_LE(s.until - now, 250ms);
        last = s.until - now;
        now = s.until;
        EXPECT_EQ(m.waited(now).next, Next::attempt);
    }
    auto s = m.attempted(failed(errc::connection_lost, t0 + 1s), t0 + 1s);
    EXPECT_EQ(s.next, Next::failed) << "the deadline passed";
    AcquireFsm refusing(rules(1s), t0);
    refusing.start(t0);
    s = refusing.attempted(failed(errc::permission_denied), t0);
    EXPECT_EQ(s.next, Next::failed);
    EXPECT_EQ(s.status.ec, make_error_code(errc::permission_denied));
}

TEST(AcquireFsm, ACleanupLeftPendingGetsANewTokenAndAFreshClaim) {
    AcquireFsm m(abandoning(), t0);
    m.start(t0);
    auto a = refused(100ms);
    a.cleanup_pending = true;
    auto s = m.attempted(a, t0);
    EXPECT_TRUE(s.new_token);
    ASSERT_TRUE(s.abandon);
    EXPECT_TRUE(s.abandon->now);
    EXPECT_EQ(s.next, Next::subscribe);
}

TEST(AcquireFsm, ACleanupLeftPendingByAFailedAttemptGetsANewTokenToo) {
    // A Redlock round that too few nodes answered fails with no_quorum, and its give-back to
    // the silent nodes goes on in the background: the retry must not reuse the token.
    AcquireFsm m(rules(1s), t0);
    m.start(t0);
    auto a = failed(errc::no_quorum, t0);
    a.cleanup_pending = true;
    auto s = m.attempted(a, t0);
    EXPECT_EQ(s.next, Next::sleep) << "no_quorum is ridden out until the deadline";
    EXPECT_TRUE(s.new_token);
    AcquireFsm plain(rules(1s), t0);
    plain.start(t0);
    EXPECT_FALSE(plain.attempted(failed(errc::no_quorum, t0), t0).new_token)
        << "nothing left behind: the token may stay";
}

TEST(AcquireFsm, UnreplicatedGrantIsReleasedAtOnceAndReported) {
    AcquireFsm m(rules(), t0);
    m.start(t0);
    m.attempted(granted(t0 + 1ms), t0 + 2ms);
    auto s = m.confirmed(Status::error(errc::not_replicated, "1 of 2 replicas"), t0 + 3ms);
    EXPECT_EQ(s.next, Next::failed);
    EXPECT_EQ(s.status.ec, make_error_code(errc::not_replicated));
    ASSERT_TRUE(s.release);
    EXPECT_TRUE(s.release->now);
    EXPECT_EQ(s.release->give_up, t0 + 1ms + 10s);
}

TEST(AcquireFsm, AFixedOwnersUnreplicatedGrantIsReleasedOnceAndNeverAgain) {
    // Its release counts one of the owner's holds down: sent again after a lost reply, it
    // could take the count of the owner's other holdings.
    for (bool fixed : {false, true}) {
        auto r = rules();
        r.fixed_owner = fixed;
        AcquireFsm m(r, t0);
        m.start(t0);
        m.attempted(granted(t0 + 1ms), t0 + 2ms);
        auto s = m.confirmed(Status::error(errc::not_replicated, "1 of 2 replicas"), t0 + 3ms);
        ASSERT_TRUE(s.release);
        EXPECT_TRUE(s.release->now);
        EXPECT_EQ(s.release->once, fixed);
    }
}

TEST(AcquireFsm, WithoutWakeUpsRedlockAndClusterSleepOnceThenSubscribeAgain) {
    auto r = rules();
    r.can_sleep_instead = true;
    AcquireFsm m(r, t0);
    m.start(t0);
    m.attempted(refused(400ms), t0);
    auto s = m.subscribed(Status::error(errc::connect_failed, "node down"), t0);
    EXPECT_EQ(s.next, Next::attempt);
    s = m.attempted(refused(400ms), t0);
    EXPECT_EQ(s.next, Next::sleep);
    EXPECT_EQ(s.until, t0 + 401ms);
    m.waited(t0 + 400ms);
    s = m.attempted(refused(400ms), t0 + 400ms);
    EXPECT_EQ(s.next, Next::subscribe);
    // One server has nobody else to carry wake-ups: the error ends it (no deadline to ride).
    AcquireFsm one(rules(), t0);
    one.start(t0);
    one.attempted(refused(400ms), t0);
    s = one.subscribed(Status::error(errc::connect_failed, "down"), t0);
    EXPECT_EQ(s.next, Next::failed);
    // A subscription that timed out at the deadline means the lock was not obtained.
    AcquireFsm late(rules(100ms), t0);
    late.start(t0);
    late.attempted(refused(400ms), t0);
    s = late.subscribed(Status::error(errc::timeout, "slow"), t0 + 100ms);
    EXPECT_EQ(s.status.ec, make_error_code(errc::not_acquired));
}

TEST(AcquireFsm, CancelledWhileQueuedLeavesNothingBehind) {
    AcquireFsm m(abandoning(), t0);
    m.start(t0);
    m.attempted(refused(1000ms), t0);
    m.subscribed({}, t0);
    m.attempted(refused(1000ms), t0);
    auto s = m.cancelled(t0 + 10ms);
    EXPECT_EQ(s.next, Next::failed);
    EXPECT_EQ(s.status.ec, make_error_code(errc::cancelled));
    EXPECT_TRUE(s.unsubscribe);
    ASSERT_TRUE(s.abandon);
    EXPECT_TRUE(s.abandon->now);
    // Cancelled before any attempt: nothing to undo.
    AcquireFsm fresh(abandoning(), t0);
    fresh.start(t0);
    EXPECT_TRUE(no_effects(fresh.cancelled(t0)));
}

TEST(AcquireFsm, AfterAHandoffItYieldsToTheWokenWaiterFirst) {
    auto r = rules(1s);
    r.yield_until = t0 + 50ms;
    AcquireFsm m(r, t0);
    auto s = m.start(t0);
    EXPECT_EQ(s.next, Next::subscribe);
    s = m.subscribed({}, t0);
    EXPECT_EQ(s.next, Next::wait);
    EXPECT_EQ(s.until, t0 + 50ms);
    EXPECT_EQ(m.waited(t0 + 50ms).next, Next::attempt);
    // Still subscribed from the yield: a refusal waits without subscribing again.
    EXPECT_EQ(m.attempted(refused(100ms), t0 + 50ms).next, Next::wait);
    // A yield that cannot subscribe just goes ahead; one already over is skipped.
    AcquireFsm failing(r, t0);
    failing.start(t0);
    EXPECT_EQ(failing.subscribed(Status::error(errc::timeout, "x"), t0).next, Next::attempt);
    AcquireFsm over(r, t0 + 60ms);
    EXPECT_EQ(over.start(t0 + 60ms).next, Next::attempt);
}

TEST(AcquireFsm, ALookEndsWhenItFindsWhatItWaitsForWithNothingToConfirm) {
    auto r = rules();
    r.look_only = true;
    r.no_expiry_recheck = 0ms;
    AcquireFsm m(r, t0);
    m.start(t0);
    auto s = m.attempted(refused(-1ms), t0);  // not yet, and nothing expires
    EXPECT_EQ(s.next, Next::subscribe);
    m.subscribed({}, t0);
    s = m.attempted(refused(-1ms), t0);
    EXPECT_EQ(s.next, Next::wait);
    EXPECT_EQ(s.until, Clock::time_point::max()) << "a message alone can end this wait";
    Attempted seen;
    seen.acquired = true;  // a look's "done" may come at any time: no validity to judge
    s = m.attempted(seen, t0 + 1h);
    EXPECT_EQ(s.next, Next::granted);
    EXPECT_TRUE(s.unsubscribe);
    EXPECT_FALSE(s.release);
}

TEST(AcquireFsm, WithoutWakeUpsALookRechecksAtItsOwnPace) {
    auto r = rules();
    r.look_only = true;
    r.no_expiry_recheck = 0ms;
    r.can_sleep_instead = true;
    r.unarmed_recheck = 1s;
    AcquireFsm m(r, t0);
    m.start(t0);
    m.attempted(refused(30000ms), t0);
    m.subscribed(Status::error(errc::connect_failed, "first node down"), t0);
    auto s = m.attempted(refused(30000ms), t0);
    EXPECT_EQ(s.next, Next::sleep);
    EXPECT_EQ(s.until, t0 + 1s) << "not the leader's whole term";
}
