// Leases: expiry, renewal, loss detection, lock_delay, extend.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "acquire_options.hpp"
#include "deadbolt/deadbolt.hpp"
#include "eventually.hpp"
#include "process_threads.hpp"
#include "redis_server.hpp"

using namespace std::chrono_literals;
using deadbolt::test::no_wait;
using deadbolt::test::RedisServer;
using deadbolt::test::wait_for;
using Clock = std::chrono::steady_clock;

TEST(Lease, TtlExpiryFreesTheLock) {
    RedisServer srv;
    auto a = deadbolt::Client::connect(srv.url());
    auto b = deadbolt::Client::connect(srv.url());
    deadbolt::MutexOptions o{.ttl = 300ms, .auto_renew = false};
    auto la = a.acquire("exp", o, no_wait());
    EXPECT_THROW(b.acquire("exp", o, no_wait()), deadbolt::LockError);
    // The waiter is woken by expiry (PTTL), not by a release message.
    auto t0 = Clock::now();
    auto lb = b.acquire("exp", o, wait_for(5s));
    EXPECT_TRUE(lb.valid());
    EXPECT_GE(Clock::now() - t0, 150ms);
    EXPECT_GT(lb.fence(), la.fence());
    // la's validity ran out: the watchdog marks it lost.
    auto until = Clock::now() + 2s;
    while (!la.lost() && Clock::now() < until) std::this_thread::sleep_for(10ms);
    EXPECT_TRUE(la.lost());
    EXPECT_FALSE(la.valid());
}

// Every acquisition schedules its lease's renewal and every release drops it. Were the
// renewer's thread woken whenever it had nothing left to renew, each lock() would cost a
// futex wake and two context switches on top of the engine's round trips.
TEST(Lease, LockingAndUnlockingAgainAndAgainLeavesTheRenewerAsleep) {
    RedisServer srv;
    auto c = deadbolt::Client::connect(srv.url());
    auto m = c.mutex("again");
    m.lock();  // starts the renewer
    m.unlock();
    // It names itself once it runs, which a loaded machine may put off.
    ASSERT_TRUE(deadbolt::test::eventually([] {
        return deadbolt::test::sleeps_of_threads("deadbolt-renew").size() == 1;
    })) << "one client, one renewer";
    std::this_thread::sleep_for(100ms);  // time for it to go to sleep again
    auto before = deadbolt::test::sleeps_of_threads("deadbolt-renew");
    ASSERT_EQ(before.size(), 1U) << "one client, one renewer";
    constexpr int kTurns = 50;
    for (int i = 0; i < kTurns; ++i) {
        m.lock();
        m.unlock();
        // Room for the renewer to run, and fall asleep with nothing to renew, were it woken.
        std::this_thread::sleep_for(2ms);
    }
    auto after = deadbolt::test::sleeps_of_threads("deadbolt-renew");
    ASSERT_EQ(after.size(), 1U);
    ASSERT_EQ(after.begin()->first, before.begin()->first) << "the same renewer";
    EXPECT_LE(after.begin()->second - before.begin()->second, kTurns / 10)
        << "the renewer was woken by acquisitions";
}

TEST(Lease, ValidUntilIsBeforeServerExpiry) {
    RedisServer srv;
    auto c = deadbolt::Client::connect(srv.url());
    auto before = Clock::now();
    auto l = c.acquire("v", {.ttl = 1000ms, .auto_renew = false}, no_wait());
    // Started before the request, minus 1% + 2 ms.
    EXPECT_LE(l.valid_until(), before + 1000ms - 12ms + 50ms);
    EXPECT_LE(l.valid_until(), Clock::now() + 1000ms - 12ms);
    EXPECT_GT(l.valid_until(), before + 900ms);
}

TEST(Lease, AutoRenewalHoldsShortTtlLockLongerThanTtl) {
    RedisServer srv;
    auto a = deadbolt::Client::connect(srv.url());
    auto b = deadbolt::Client::connect(srv.url());
    auto l = a.acquire("renewed", {.ttl = 1000ms}, no_wait());
    auto raw = srv.raw();
    auto end = Clock::now() + 5s;
    int checks = 0;
    while (Clock::now() < end) {
        EXPECT_TRUE(l.valid());
        EXPECT_EQ(raw.cmd({"GET", "renewed"}).str, l.token());
        EXPECT_THROW(b.acquire("renewed", {.ttl = 1000ms}, no_wait()), deadbolt::LockError);
        ++checks;
        std::this_thread::sleep_for(250ms);
    }
    EXPECT_GE(checks, 15);
    EXPECT_FALSE(l.lost());
    l.release();
    EXPECT_EQ(raw.cmd({"EXISTS", "renewed"}).integer, 0);
}

TEST(Lease, ExternalDeleteFiresStopTokenAndOnLostWithinOneRenewalPeriod) {
    RedisServer srv;
    auto c = deadbolt::Client::connect(srv.url());
    std::atomic<int> lost_calls{0};
    std::error_code why;
    deadbolt::MutexOptions o{.ttl = 900ms};  // renews every 300 ms
    o.on_lost = [&](std::string_view name, std::error_code ec) {
        EXPECT_EQ(name, "victim");
        why = ec;
        ++lost_calls;
    };
    auto l = c.acquire("victim", o, no_wait());
    std::atomic<bool> stopped{false};
    std::stop_callback cb(l.stop_token(), [&] { stopped = true; });
    std::this_thread::sleep_for(50ms);
    srv.raw().cmd({"DEL", "victim"});
    auto deleted_at = Clock::now();
    while (!stopped && Clock::now() < deleted_at + 2s) std::this_thread::sleep_for(5ms);
    EXPECT_TRUE(stopped);
    EXPECT_LE(Clock::now() - deleted_at, 300ms + 200ms);  // one period plus scheduling slack
    EXPECT_TRUE(l.lost());
    // The stop token fires before on_lost runs on the renewer's thread; wait for it.
    while (lost_calls.load() == 0 && Clock::now() < deleted_at + 2s)
        std::this_thread::sleep_for(1ms);
    EXPECT_EQ(lost_calls.load(), 1);
    EXPECT_EQ(why, deadbolt::errc::not_owner);
    EXPECT_THROW(l.release(), deadbolt::LockError);
    EXPECT_EQ(lost_calls.load(), 1);  // reported once
}

TEST(Lease, MaxHoldStopsRenewing) {
    RedisServer srv;
    auto c = deadbolt::Client::connect(srv.url());
    auto l = c.acquire("bounded", {.ttl = 300ms, .max_hold = 400ms}, no_wait());
    auto until = Clock::now() + 3s;
    while (!l.lost() && Clock::now() < until) std::this_thread::sleep_for(10ms);
    EXPECT_TRUE(l.lost());
    // Validity ends a drift margin before the key does; then the key expires by itself.
    while (srv.raw().cmd({"EXISTS", "bounded"}).integer != 0 && Clock::now() < until)
        std::this_thread::sleep_for(5ms);
    EXPECT_EQ(srv.raw().cmd({"EXISTS", "bounded"}).integer, 0);
    EXPECT_LT(Clock::now(), until);
}

TEST(Lease, LockDelayBlocksAfterVanishedHolderButNotAfterRelease) {
    RedisServer srv;
    auto a = deadbolt::Client::connect(srv.url());
    auto b = deadbolt::Client::connect(srv.url());
    deadbolt::MutexOptions o{.ttl = 200ms, .auto_renew = false, .lock_delay = 600ms};
    {
        auto l = a.acquire("delayed", o, no_wait());
        l.release();
    }
    // Clean release: free at once.
    auto l2 = b.acquire("delayed", o, no_wait());
    EXPECT_TRUE(l2.valid());
    // Now the holder "vanishes": it never releases. Simulate by waiting past its TTL.
    auto t0 = Clock::now();
    std::this_thread::sleep_for(300ms);  // ttl over, lock_delay running
    EXPECT_THROW(a.acquire("delayed", o, no_wait()), deadbolt::LockError);
    auto l3 = a.acquire("delayed", o, wait_for(3s));
    EXPECT_GE(Clock::now() - t0, 700ms);
    EXPECT_GT(l3.fence(), l2.fence());
}

TEST(Lease, ExtendMovesValidityAndServerTtl) {
    RedisServer srv;
    auto c = deadbolt::Client::connect(srv.url());
    auto l = c.acquire("ext", {.ttl = 500ms, .auto_renew = false}, no_wait());
    auto before = l.valid_until();
    l.extend(10s);
    EXPECT_GT(l.valid_until(), before + 5s);
    EXPECT_GT(srv.raw().cmd({"PTTL", "ext"}).integer, 9000);
    EXPECT_THROW(l.extend(0ms), deadbolt::UsageError);
    srv.raw().cmd({"SET", "ext", "other"});
    EXPECT_FALSE(l.is_current());
    std::error_code ec;
    l.extend(10s, ec);
    EXPECT_EQ(ec, deadbolt::errc::not_owner);
    EXPECT_TRUE(l.lost());
}

TEST(Lease, TwelveHundredLeasesRenewInPipelines) {
    RedisServer srv;
    auto c = deadbolt::Client::connect(srv.url());
    std::vector<deadbolt::Lease> leases;
    for (int i = 0; i < 1200; ++i)
        leases.push_back(c.acquire("many:" + std::to_string(i), {.ttl = 600ms}, no_wait()));
    auto raw = srv.raw();
    auto evals0 = raw.calls("evalsha") + raw.calls("eval");
    auto reads0 = raw.stat("total_reads_processed");
    std::this_thread::sleep_for(1500ms);  // several renewal periods, past the TTL
    auto renewals = raw.calls("evalsha") + raw.calls("eval") - evals0;
    auto reads = raw.stat("total_reads_processed") - reads0;
    for (auto& l : leases) ASSERT_FALSE(l.lost());
    EXPECT_EQ(raw.cmd({"EXISTS", "many:0", "many:600", "many:1199"}).integer, 3);
    EXPECT_GE(renewals, 2 * 1200);
    // Pipelined: the server read the renewals in far fewer socket reads than commands.
    EXPECT_LT(reads * 20, renewals) << "reads=" << reads << " renewals=" << renewals;
}

TEST(Lease, ValidityIsMeasuredOnTheInjectedClock) {
    // A client whose clock runs at half speed believes its lease lasts twice as long as the
    // server keeps the key: the hazard of a drifting host, here made deliberate.
    RedisServer srv;
    auto origin = Clock::now();
    deadbolt::ClientOptions slow;
    slow.clock = [origin] { return origin + (Clock::now() - origin) / 2; };
    auto skewed = deadbolt::Client::connect(srv.url(), slow);
    auto honest = deadbolt::Client::connect(srv.url());
    deadbolt::MutexOptions o{.ttl = 200ms, .auto_renew = false};
    auto ls = skewed.acquire("skew-slow", o, no_wait());
    auto lh = honest.acquire("skew-true", o, no_wait());
    std::this_thread::sleep_for(300ms);
    EXPECT_EQ(srv.raw().cmd({"EXISTS", "skew-slow"}).integer, 0);  // the server let it go
    EXPECT_TRUE(ls.valid());   // the slow clock says 150 ms have passed
    EXPECT_FALSE(lh.valid());  // the true clock knows better
    EXPECT_FALSE(ls.stop_token().stop_requested());
    std::this_thread::sleep_for(250ms);  // 275 ms on the slow clock: past its validity
    EXPECT_FALSE(ls.valid());
}
