// Sentinel: a primary, two replicas and three real sentinels. The client finds the primary
// through the sentinels, follows a failover, and reports a held lease lost when the new
// primary does not hold it.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>

#include "deadbolt/deadbolt.hpp"
#include "eventually.hpp"
#include "redis_server.hpp"
#include "sentinel_group.hpp"
#include "tcp_proxy.hpp"

using namespace std::chrono_literals;
using deadbolt::errc;
using deadbolt::make_error_code;
using deadbolt::test::eventually;
using Clock = std::chrono::steady_clock;

using Sentinels = deadbolt::test::SentinelGroup;

TEST(Sentinel, FindsThePrimaryThroughTheSentinels) {
    Sentinels w;
    auto client = deadbolt::Client::connect(w.url());
    auto lease = client.acquire("job");
    EXPECT_EQ(w.primary.raw().cmd({"GET", "job"}).str, lease.token());
    // A name the sentinels do not watch, and no sentinel at all, are clear errors.
    try {
        deadbolt::Client::connect(
            "redis-sentinel://127.0.0.1:" + std::to_string(w.sentinels[0]->port()) + "/nosuch");
        ADD_FAILURE() << "connected to an unknown master";
    } catch (const deadbolt::UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("no sentinel knows a master named 'nosuch'"),
                  std::string::npos)
            << e.what();
    }
    auto dead = std::to_string(deadbolt::test::free_port());
    try {
        deadbolt::Client::connect("redis-sentinel://127.0.0.1:" + dead + "/db");
        ADD_FAILURE() << "connected without a sentinel";
    } catch (const deadbolt::ConnectionError& e) {
        EXPECT_NE(std::string(e.what()).find("no sentinel answered"), std::string::npos)
            << e.what();
    }
}

TEST(Sentinel, AHeldLockSurvivesAFailoverToAReplicaThatHasIt) {
    Sentinels w;
    auto client = deadbolt::Client::connect(w.url());
    deadbolt::MutexOptions o;
    // Well above the switch time: renewals sent to the old primary after the promotion are
    // not replicated, so with a 3 s TTL the key could expire on the new primary first.
    o.ttl = 9s;
    std::string why;  // what on_lost said, for the failure message
    Clock::time_point lost_at{};
    o.on_lost = [&](std::string_view, std::error_code ec) {
        why = ec.message();
        lost_at = Clock::now();
    };
    auto lease = client.acquire("job", o);
    ASSERT_EQ(w.primary.raw().cmd({"WAIT", "2", "5000"}).integer, 2);  // both replicas have it
    auto before_fo = Clock::now();
    auto promoted = w.fail_over();
    auto after_fo = Clock::now();
    // The client follows: the lease is still current on the new primary and stays renewed.
    // (A request in flight while the primary moves fails with unknown_outcome: ask again.)
    EXPECT_TRUE(eventually(
        [&] {
            std::error_code ec;
            return lease.is_current(ec) && !ec;
        },
        10s));
    std::this_thread::sleep_for(o.ttl * 4 / 3);
    EXPECT_TRUE(lease.valid());
    EXPECT_FALSE(lease.lost())
        << why << " lost at +"
        << std::chrono::duration_cast<std::chrono::milliseconds>(lost_at - before_fo).count()
        << " ms; failover seen at +"
        << std::chrono::duration_cast<std::chrono::milliseconds>(after_fo - before_fo).count();
    EXPECT_EQ(w.by_port(promoted).raw().cmd({"GET", "job"}).str, lease.token());
    // New locks land on the new primary.
    auto next = client.acquire("job2");
    EXPECT_EQ(w.by_port(promoted).raw().cmd({"GET", "job2"}).str, next.token());
}

TEST(Sentinel, ALockTheNewPrimaryLacksIsReportedLost) {
    Sentinels w;
    w.link1.stall_replies(true);  // replication held back: the lock stays on the primary
    w.link2.stall_replies(true);
    auto client = deadbolt::Client::connect(w.url());
    std::atomic<int> lost{0};
    deadbolt::MutexOptions o;
    o.ttl = 60s;  // the first renewal comes after 20 s: only the failover check can be first
    o.on_lost = [&](std::string_view, std::error_code ec) {
        if (ec == make_error_code(errc::not_owner)) ++lost;
    };
    auto lease = client.acquire("job", o);
    auto stop = lease.stop_token();
    // With sync_replicas the same lock is refused instead: no replica has it.
    auto strict = deadbolt::Client::connect(w.url("sync_replicas=1&sync_timeout=200ms"));
    std::error_code ec;
    EXPECT_FALSE(strict.mutex("job2").try_lock(ec));
    EXPECT_EQ(ec, make_error_code(errc::not_replicated));
    w.fail_over();
    w.link1.stall_replies(false);
    w.link2.stall_replies(false);
    EXPECT_TRUE(eventually([&] { return stop.stop_requested(); }, 10s));
    EXPECT_EQ(lost.load(), 1);
    EXPECT_FALSE(lease.is_current());
}
