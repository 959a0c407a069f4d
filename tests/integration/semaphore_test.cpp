// Semaphore and PermitExpirableSemaphore: never over-committed, no permit lost, bad input.
#include <gtest/gtest.h>

#include <thread>

#include "deadbolt/deadbolt.hpp"
#include "redis_server.hpp"

using namespace std::chrono_literals;
using deadbolt::test::RedisServer;
using Clock = std::chrono::steady_clock;

TEST(Semaphore, PermitsRunOutAndComeBackOnRelease) {
    RedisServer srv;
    auto a = deadbolt::Client::connect(srv.url());
    auto b = deadbolt::Client::connect(srv.url());
    auto sa = a.semaphore("pool", 2);
    auto sb = b.semaphore("pool", 2);
    ASSERT_TRUE(sa.try_acquire());
    ASSERT_TRUE(sb.try_acquire());
    EXPECT_FALSE(sb.try_acquire());
    EXPECT_EQ(sa.available(), 0);
    EXPECT_EQ(sa.held(), 1u);
    sa.release();
    EXPECT_EQ(sb.available(), 1);
    EXPECT_TRUE(sb.try_acquire());
    EXPECT_EQ(sb.held(), 2u);
}

TEST(Semaphore, WaiterWakesOnReleaseNotOnExpiry) {
    RedisServer srv;
    auto a = deadbolt::Client::connect(srv.url());
    auto b = deadbolt::Client::connect(srv.url());
    auto sa = a.semaphore("pool", 1, {.ttl = 30s});
    auto sb = b.semaphore("pool", 1, {.ttl = 30s});
    sa.acquire();
    std::thread releaser([&] {
        std::this_thread::sleep_for(200ms);
        sa.release();
    });
    EXPECT_TRUE(sb.try_acquire_for(10s));  // the holder's TTL is 30 s: only the release wakes it
    releaser.join();
}

TEST(Semaphore, BadInputIsAClearError) {
    RedisServer srv;
    auto c = deadbolt::Client::connect(srv.url());
    EXPECT_THROW(c.semaphore("pool", 0), deadbolt::UsageError);
    EXPECT_THROW(c.semaphore("pool", -3), deadbolt::UsageError);
    EXPECT_THROW(c.permit_semaphore("pool", 0), deadbolt::UsageError);
    auto s = c.semaphore("pool", 3);
    try {
        s.release();
        FAIL() << "released a permit that was never acquired";
    } catch (const deadbolt::LockError& e) {
        EXPECT_EQ(e.code(), deadbolt::make_error_code(deadbolt::errc::not_owner));
    }
    ASSERT_TRUE(s.try_acquire());
    auto other = c.semaphore("pool", 5);  // disagrees on the count
    try {
        other.try_acquire();
        FAIL() << "a client asking for 5 permits used a 3-permit semaphore";
    } catch (const deadbolt::UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("3 permits"), std::string::npos) << e.what();
    }
    srv.raw().cmd({"SET", "str", "x"});
    EXPECT_THROW(c.semaphore("str", 1).try_acquire(), deadbolt::ServerError);
}

TEST(PermitExpirableSemaphore, CrashedHoldersPermitComesBackAndItsLossIsSignalled) {
    RedisServer srv;
    auto a = deadbolt::Client::connect(srv.url());
    auto b = deadbolt::Client::connect(srv.url());
    auto sa = a.permit_semaphore("pes", 1, {.ttl = 300ms, .auto_renew = false});
    auto sb = b.permit_semaphore("pes", 1);
    auto p = sa.acquire();
    ASSERT_TRUE(p);
    EXPECT_FALSE(sb.try_acquire());
    auto q = sb.acquire({.deadline = Clock::now() + 5s});
    EXPECT_TRUE(q);
    EXPECT_TRUE(p.lost());
    EXPECT_FALSE(sa.release(p.token()));  // expired: nothing to release
}

TEST(PermitExpirableSemaphore, PermitsAreReleasedAndExtendedByIdFromAnotherClient) {
    RedisServer srv;
    auto a = deadbolt::Client::connect(srv.url());
    auto b = deadbolt::Client::connect(srv.url());
    auto sa = a.permit_semaphore("pes", 2, {.ttl = 10s, .auto_renew = false});
    auto sb = b.permit_semaphore("pes", 2);
    auto p1 = sa.acquire();
    auto p2 = sa.acquire();
    EXPECT_NE(p1.token(), p2.token());
    EXPECT_FALSE(sb.try_acquire());
    EXPECT_TRUE(sb.extend(p1.token(), 60s));
    auto score = std::stoll(srv.raw().cmd({"ZSCORE", "pes", p1.token()}).str);
    auto other = std::stoll(srv.raw().cmd({"ZSCORE", "pes", p2.token()}).str);
    EXPECT_GT(score - other, 40000);
    EXPECT_TRUE(sb.release(p2.token()));
    EXPECT_FALSE(sb.release(p2.token()));
    EXPECT_FALSE(sb.release("no-such-permit"));
    EXPECT_EQ(sb.available(), 1);
    EXPECT_TRUE(sb.try_acquire());
}

// A permit has no fence: the message of one found gone at its release must not name one.
TEST(PermitExpirableSemaphore, APermitGoneAtItsReleaseIsNotOursAndNamesNoFence) {
    RedisServer srv;
    auto c = deadbolt::Client::connect(srv.url());
    auto s = c.permit_semaphore("pes", 2, {.ttl = 10s, .auto_renew = false});
    auto p = s.acquire();
    ASSERT_EQ(srv.raw().cmd({"ZREM", "pes", p.token()}).integer, 1);
    try {
        p.release();
        FAIL() << "released a permit that was gone";
    } catch (const deadbolt::LockError& e) {
        EXPECT_EQ(e.code(), deadbolt::make_error_code(deadbolt::errc::not_owner));
        EXPECT_EQ(std::string(e.what()).find("fence"), std::string::npos) << e.what();
    }
}
