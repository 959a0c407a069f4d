// Fencing: tokens strictly increase, survive a lost counter, and fenced_set enforces them.
#include <gtest/gtest.h>

#include "acquire_options.hpp"
#include "deadbolt/deadbolt.hpp"
#include "redis_server.hpp"

using namespace std::chrono_literals;
using deadbolt::test::no_wait;
using deadbolt::test::RedisServer;
using Clock = std::chrono::steady_clock;

TEST(Fencing, StrictlyIncreasingOverThousandAcquisitions) {
    RedisServer srv;
    auto c = deadbolt::Client::connect(srv.url());
    std::uint64_t last = 0;
    for (int i = 0; i < 1000; ++i) {
        auto l = c.acquire("fenced", {}, no_wait());
        ASSERT_GT(l.fence(), last) << "acquisition " << i;
        ASSERT_LT(l.fence(), std::uint64_t{1} << 53);  // exact in JSON / JavaScript
        last = l.fence();
    }
    // The fence key expires (nothing leaks); the lock key is gone after release.
    auto raw = srv.raw();
    EXPECT_GT(raw.cmd({"PTTL", "{fenced}:fence"}).integer, 0);
    EXPECT_EQ(raw.cmd({"EXISTS", "fenced"}).integer, 0);
}

TEST(Fencing, SurvivesServerRestartWithoutPersistence) {
    RedisServer srv;
    std::uint64_t before;
    {
        auto c = deadbolt::Client::connect(srv.url());
        before = c.acquire("restart-me", {}, no_wait()).fence();
    }
    srv.restart();  // no RDB, no AOF: the counter is gone
    auto c = deadbolt::Client::connect(srv.url());
    EXPECT_EQ(srv.raw().cmd({"EXISTS", "{restart-me}:fence"}).integer, 0);
    auto after = c.acquire("restart-me", {}, no_wait()).fence();
    EXPECT_GT(after, before);
}

TEST(Fencing, SurvivesCounterDeletedAndGarbled) {
    RedisServer srv;
    auto c = deadbolt::Client::connect(srv.url());
    auto f1 = c.acquire("g", {}, no_wait()).fence();
    srv.raw().cmd({"DEL", "{g}:fence"});
    auto f2 = c.acquire("g", {}, no_wait()).fence();
    EXPECT_GT(f2, f1);
    srv.raw().cmd({"SET", "{g}:fence", "not-a-number"});
    auto f3 = c.acquire("g", {}, no_wait()).fence();
    EXPECT_GT(f3, f2);
}

TEST(Fencing, FencedSetRejectsStaleToken) {
    RedisServer srv;
    auto c = deadbolt::Client::connect(srv.url());
    auto old = c.acquire("res", {.ttl = 100ms, .auto_renew = false}, no_wait());
    auto stale_fence = old.fence();
    std::this_thread::sleep_for(150ms);  // old holder "paused" past its TTL
    auto fresh = c.acquire("res", {}, no_wait());
    auto w1 = c.fenced_set("record", "from-new-holder", fresh.fence());
    EXPECT_TRUE(w1.accepted);
    auto w2 = c.fenced_set("record", "late-write-from-paused-holder", stale_fence);
    EXPECT_FALSE(w2.accepted);
    EXPECT_EQ(w2.highest, fresh.fence());
    EXPECT_EQ(srv.raw().cmd({"GET", "record"}).str, "from-new-holder");
    // The same holder may write again with its own fence.
    EXPECT_TRUE(c.fenced_set("record", "second", fresh.fence()).accepted);
    EXPECT_THROW(c.fenced_set("record", "x", 0), deadbolt::UsageError);
}

TEST(Fencing, FencedSetKeepsDataTtlOnRecord) {
    RedisServer srv;
    auto c = deadbolt::Client::connect(srv.url());
    auto raw = srv.raw();
    raw.cmd({"SET", "cache", "v0", "PX", "60000"});
    ASSERT_TRUE(c.fenced_set("cache", "v1", 5).accepted);
    EXPECT_GT(raw.cmd({"PTTL", "cache"}).integer, 50000);
    EXPECT_GT(raw.cmd({"PTTL", "{cache}:deadbolt-fence"}).integer, 50000);
}

TEST(Fencing, CompareAndSetLosesNoUpdateWhenTwoHoldersOverlap) {
    RedisServer srv;
    auto c = deadbolt::Client::connect(srv.url());
    const std::uint64_t older = 100, newer = 200;  // two holders that overlap (fences ordered)
    // The newer writes first: the older one's write is stale, whatever it read.
    auto a = c.fenced_get("n");
    auto b = c.fenced_get("n");
    EXPECT_FALSE(a.value);
    EXPECT_EQ(a.version, 0u);
    EXPECT_TRUE(c.fenced_cas("n", "1", newer, b.version).accepted);
    auto late = c.fenced_cas("n", "1", older, a.version);
    EXPECT_FALSE(late.accepted);
    EXPECT_TRUE(late.stale_fence);
    // The older writes first: the newer one read a version that moved, so its update of the
    // old value is refused (a plain fenced_set would accept it: one update lost).
    a = c.fenced_get("m");
    b = c.fenced_get("m");
    EXPECT_TRUE(c.fenced_cas("m", "1", older, a.version).accepted);
    auto moved = c.fenced_cas("m", "1", newer, b.version);
    EXPECT_FALSE(moved.accepted);
    EXPECT_FALSE(moved.stale_fence);
    EXPECT_EQ(moved.version, 1u);
    b = c.fenced_get("m");  // read again, write again: both updates kept
    EXPECT_EQ(*b.value, "1");
    EXPECT_TRUE(c.fenced_cas("m", "2", newer, b.version).accepted);
    EXPECT_EQ(srv.raw().cmd({"GET", "m"}).str, "2");
    // A blind fenced_set moves the version too.
    auto before = c.fenced_get("m");
    EXPECT_TRUE(c.fenced_set("m", "9", newer).accepted);
    EXPECT_FALSE(c.fenced_cas("m", "3", newer, before.version).accepted);
}

TEST(Fencing, TheVersionLivesAsLongAsTheData) {
    RedisServer srv;
    auto c = deadbolt::Client::connect(srv.url());
    auto raw = srv.raw();
    raw.cmd({"SET", "cache", "v0", "PX", "60000"});
    ASSERT_TRUE(c.fenced_cas("cache", "v1", 5, 0).accepted);
    EXPECT_GT(raw.cmd({"PTTL", "{cache}:deadbolt-version"}).integer, 50000);
    ASSERT_TRUE(c.fenced_cas("forever", "v1", 5, 0).accepted);
    EXPECT_EQ(raw.cmd({"PTTL", "{forever}:deadbolt-version"}).integer, -1);
}

TEST(Fencing, PutIfCurrentIsRefusedOnRedisWithWhatToUseInstead) {
    RedisServer srv;
    auto c = deadbolt::Client::connect(srv.url());
    auto l = c.acquire("guarded", {}, no_wait());
    try {
        l.put_if_current("data", "x");
        ADD_FAILURE() << "Redis cannot check the lock and write the data in one step";
    } catch (const deadbolt::UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("fenced_set"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(l.lost()) << "a refused call says nothing about the lock";
    EXPECT_EQ(srv.raw().cmd({"EXISTS", "data"}).integer, 0);
}
