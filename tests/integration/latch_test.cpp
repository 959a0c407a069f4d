// CountDownLatch: opens exactly once, wakes every waiter by publish, bad input.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "deadbolt/deadbolt.hpp"
#include "redis_server.hpp"

using namespace std::chrono_literals;
using deadbolt::test::RedisServer;

TEST(CountDownLatch, OpensExactlyOnceUnderConcurrentCountDowns) {
    RedisServer srv;
    auto c = deadbolt::Client::connect(srv.url());
    auto latch = c.latch("start");
    ASSERT_TRUE(latch.try_set_count(40));
    EXPECT_FALSE(latch.try_set_count(5));  // already set
    EXPECT_EQ(latch.count(), 40);
    std::atomic<int> openers{0};
    std::vector<std::thread> ts;
    for (int i = 0; i < 8; ++i)
        ts.emplace_back([&] {
            auto mine = deadbolt::Client::connect(srv.url()).latch("start");
            for (int k = 0; k < 6; ++k)  // 48 count-downs for a count of 40
                if (mine.count_down()) ++openers;
        });
    for (auto& t : ts) t.join();
    EXPECT_EQ(openers, 1);
    EXPECT_EQ(latch.count(), 0);
    EXPECT_FALSE(latch.count_down());
    EXPECT_EQ(srv.raw().cmd({"EXISTS", "start"}).integer, 0);
}

TEST(CountDownLatch, EveryWaiterWakesWhenItOpens) {
    RedisServer srv;
    auto c = deadbolt::Client::connect(srv.url());
    auto latch = c.latch("go");
    ASSERT_TRUE(latch.try_set_count(2));
    std::atomic<int> woke{0};
    std::vector<std::thread> ts;
    for (int i = 0; i < 4; ++i)
        ts.emplace_back([&] {
            auto mine = deadbolt::Client::connect(srv.url()).latch("go");
            if (mine.wait_for(20s)) ++woke;
        });
    EXPECT_FALSE(latch.wait_for(100ms));
    latch.count_down();
    EXPECT_EQ(woke, 0);
    latch.count_down();
    for (auto& t : ts) t.join();
    EXPECT_EQ(woke, 4);
}

TEST(CountDownLatch, AnExpiredLatchIsOpenAndBadInputIsRejected) {
    RedisServer srv;
    auto c = deadbolt::Client::connect(srv.url());
    auto latch = c.latch("short");
    EXPECT_THROW(latch.try_set_count(0), deadbolt::UsageError);
    EXPECT_THROW(latch.try_set_count(-1), deadbolt::UsageError);
    EXPECT_THROW(latch.try_set_count(1, 0ms), deadbolt::UsageError);
    ASSERT_TRUE(latch.try_set_count(3, 300ms));
    EXPECT_TRUE(latch.wait_for(10s));  // woken at the expiry, without a message
    srv.raw().cmd({"HSET", "hash", "a", "1"});
    EXPECT_THROW(c.latch("hash").count(), deadbolt::ServerError);
    EXPECT_THROW(c.latch(""), deadbolt::UsageError);
}
