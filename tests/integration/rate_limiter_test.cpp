// RateLimiter on Redis: waiting, bad input, foreign data, the key's expiry, cancel. The bucket's
// arithmetic shared by clients is the conformance suite's (conformance/rate_limiter_test.cpp).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "deadbolt/deadbolt.hpp"
#include "redis_server.hpp"

using namespace std::chrono_literals;
using deadbolt::test::RedisServer;

TEST(RateLimiter, AcquireSleepsTheReportedTimeAndGivesUpAtOnceWhenItCannotMakeIt) {
    RedisServer srv;
    auto client = deadbolt::Client::connect(srv.url());
    auto rl = client.rate_limiter("job", {.rate = 1, .per = 200ms, .burst = 1});
    rl.acquire();
    auto t0 = std::chrono::steady_clock::now();
    EXPECT_FALSE(rl.try_acquire_for(1, 20ms));  // the refill needs ~200 ms: no use waiting
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 150ms);
    EXPECT_TRUE(rl.try_acquire_for(1, 5s));
    EXPECT_FALSE(rl.try_acquire().allowed);
}

TEST(RateLimiter, BadInputAndADisagreeingClientAreRefused) {
    RedisServer srv;
    auto client = deadbolt::Client::connect(srv.url());
    using E = deadbolt::UsageError;
    EXPECT_THROW(client.rate_limiter("x", {.rate = 0}), E);
    EXPECT_THROW(client.rate_limiter("x", {.rate = -1}), E);
    EXPECT_THROW(client.rate_limiter("x", {.burst = 0}), E);
    EXPECT_THROW(client.rate_limiter("x", {.per = -5ms}), E);
    EXPECT_THROW(client.rate_limiter("x", {.per = deadbolt::kMaxTtl + 1ms}), E);
    EXPECT_THROW(client.rate_limiter("", {}), E);
    auto rl = client.rate_limiter("x", {.rate = 1, .per = 1s, .burst = 2});
    EXPECT_THROW(rl.try_acquire(0), E);
    EXPECT_THROW(rl.try_acquire(3), E);  // more than the bucket holds: never satisfiable
    EXPECT_TRUE(rl.try_acquire(2).allowed);
    auto other = client.rate_limiter("x", {.rate = 5, .per = 1s, .burst = 2});
    try {
        other.try_acquire();
        ADD_FAILURE() << "a client with another rate was let in";
    } catch (const E& e) {
        EXPECT_NE(std::string(e.what()).find("must agree"), std::string::npos) << e.what();
    }
    srv.raw().cmd({"SET", "str", "v"});
    auto wrong = client.rate_limiter("str", {});
    try {
        wrong.try_acquire();
        ADD_FAILURE() << "a string key was used as a bucket";
    } catch (const deadbolt::ServerError& e) {
        EXPECT_EQ(e.code(), deadbolt::make_error_code(deadbolt::errc::wrong_type));
    }
    EXPECT_EQ(srv.raw().cmd({"GET", "str"}).str, "v");
}

TEST(RateLimiter, AFullBucketLeavesNoKeyBehind) {
    RedisServer srv;
    auto client = deadbolt::Client::connect(srv.url());
    auto rl = client.rate_limiter("tidy", {.rate = 10, .per = 100ms, .burst = 2});
    EXPECT_TRUE(rl.try_acquire(2).allowed);
    EXPECT_EQ(srv.raw().cmd({"EXISTS", "tidy"}).integer, 1);
    std::this_thread::sleep_for(150ms);  // refilled in 20 ms; expires 1 ms after
    EXPECT_EQ(srv.raw().cmd({"EXISTS", "tidy"}).integer, 0);
}

TEST(RateLimiter, AWaitCanBeCancelled) {
    RedisServer srv;
    auto client = deadbolt::Client::connect(srv.url());
    auto rl = client.rate_limiter("slow", {.rate = 1, .per = 20s, .burst = 1});
    rl.acquire();
    std::stop_source stop;
    std::atomic<int> waits{0};
    deadbolt::AcquireOptions how;
    how.cancel = stop.get_token();
    how.on_wait = [&](const deadbolt::WaitInfo& w) {
        if (w.holder_ttl > 10s) ++waits;  // told how long the refill takes
    };
    std::thread canceller([&] {
        std::this_thread::sleep_for(100ms);
        stop.request_stop();
    });
    try {
        rl.acquire(1, how);  // the refill would take 20 s
        ADD_FAILURE() << "acquired without a token";
    } catch (const deadbolt::LockError& e) {
        EXPECT_EQ(e.code(), deadbolt::make_error_code(deadbolt::errc::cancelled));
    }
    canceller.join();
    EXPECT_EQ(waits.load(), 1);
    EXPECT_FALSE(rl.try_acquire().allowed) << "the cancelled wait took a token";
}
