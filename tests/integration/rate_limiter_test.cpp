// RateLimiter: one token bucket shared by clients in many threads, refilled on the server.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "deadbolt/deadbolt.hpp"
#include "redis_server.hpp"

using namespace std::chrono_literals;
using deadbolt::test::RedisServer;

TEST(RateLimiter, ABurstIsAllowedThenTheWaitIsReportedAndRefills) {
    RedisServer srv;
    auto client = deadbolt::Client::connect(srv.url());
    auto rl = client.rate_limiter("api", {.rate = 1, .per = 300ms, .burst = 3});
    EXPECT_EQ(rl.available(), 3);
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(rl.try_acquire().allowed) << i;
    auto d = rl.try_acquire();
    EXPECT_FALSE(d.allowed);
    EXPECT_GT(d.retry_in, 0ms);
    EXPECT_LE(d.retry_in, 300ms);
    EXPECT_EQ(d.remaining, 0);
    EXPECT_FALSE(rl.try_acquire(2).allowed);
    std::this_thread::sleep_for(d.retry_in + 20ms);
    EXPECT_TRUE(rl.try_acquire().allowed) << "no token came back after the reported wait";
}

TEST(RateLimiter, ClientsTogetherNeverExceedTheBurstPlusTheRefill) {
    RedisServer srv;
    // 6 clients x 4 threads hammer a bucket of 10 refilling 10 per second for 1 s. Exactly
    // how many get through depends on timing, but never more than burst + rate x elapsed.
    const deadbolt::RateLimit limit{.rate = 10, .per = 1s, .burst = 10};
    std::atomic<int> allowed{0};
    std::vector<std::thread> threads;
    auto start = std::chrono::steady_clock::now();
    for (int c = 0; c < 6; ++c) {
        auto client = deadbolt::Client::connect(srv.url());
        for (int t = 0; t < 4; ++t)
            threads.emplace_back([&, client] {
                auto rl = client.rate_limiter("shared", limit);
                while (std::chrono::steady_clock::now() - start < 1s)
                    if (rl.try_acquire().allowed) ++allowed;
            });
    }
    for (auto& t : threads) t.join();
    auto elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start);
    EXPECT_GE(allowed.load(), 10);  // at least the burst got through
    EXPECT_LE(allowed.load(), 10 + static_cast<int>(10 * elapsed.count()) + 1);
}

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
