// Semaphore conformance: at most N holders, a waiter woken by a release, an expired permit
// given back; or, where counts on the backend cannot add up, refused with the reason.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "contract.hpp"

using namespace std::chrono_literals;

namespace deadbolt::conformance {

template <class B>
class SemaphoreContract : public Contract<B> {};

TYPED_TEST_SUITE(SemaphoreContract, Backends, BackendName);

TYPED_TEST(SemaphoreContract, AtMostNHoldAtOnce) {
    auto n = this->name("pool");
    auto a = this->connect(), b = this->connect();
    if (!TypeParam::kCounts) {
        expect_refused([&] { (void)a.semaphore(n, 2); }, "Semaphore");
        expect_refused([&] { (void)a.permit_semaphore(n, 2); }, "PermitExpirableSemaphore");
        return;
    }
    auto sa = a.permit_semaphore(n, 2), sb = b.permit_semaphore(n, 2);
    auto p1 = sa.acquire(), p2 = sb.acquire();
    EXPECT_NE(p1.token(), p2.token());
    EXPECT_FALSE(sb.try_acquire());
    EXPECT_EQ(sa.available(), 0);
    p1.release();
    auto p3 = sb.try_acquire();
    EXPECT_TRUE(p3);
}

TYPED_TEST(SemaphoreContract, AWaiterIsWokenByARelease) {
    if (!TypeParam::kCounts) GTEST_SKIP() << "refused: see AtMostNHoldAtOnce";
    auto n = this->name("pool");
    auto a = this->connect(), b = this->connect();
    auto sa = a.permit_semaphore(n, 1, {.ttl = 60s}), sb = b.permit_semaphore(n, 1);
    auto held = sa.acquire();
    std::thread releaser([&] {
        std::this_thread::sleep_for(200ms);
        held.release();
    });
    // Without a wake-up the waiter would sleep until the 60 s TTL, past its deadline.
    auto deadline = Clock::now() + 20s;
    auto got = sb.acquire({.deadline = deadline});
    EXPECT_LT(Clock::now(), deadline) << kWokenLate;
    releaser.join();
    EXPECT_TRUE(got.valid());
}

TYPED_TEST(SemaphoreContract, AnExpiredPermitComesBack) {
    if (!TypeParam::kCounts) GTEST_SKIP() << "refused: see AtMostNHoldAtOnce";
    auto n = this->name("pool");
    auto a = this->connect(), b = this->connect();
    if (!TypeParam::kExpiresAlone) {  // refused, with the reason
        EXPECT_THROW(a.permit_semaphore(n, 1, {.ttl = this->kShort, .auto_renew = false}).acquire(),
                     UsageError);
        return;
    }
    auto dead = a.permit_semaphore(n, 1, {.ttl = this->kShort, .auto_renew = false}).acquire();
    auto got = b.permit_semaphore(n, 1).acquire({.deadline = Clock::now() + 10s});
    EXPECT_TRUE(got.valid());
    EXPECT_TRUE(dead.lost() || !dead.valid());
}

TYPED_TEST(SemaphoreContract, APermitIsReleasedByIdFromAnotherClient) {
    if (!TypeParam::kCounts) GTEST_SKIP() << "refused: see AtMostNHoldAtOnce";
    auto n = this->name("pool");
    auto a = this->connect(), b = this->connect();
    auto sa = a.permit_semaphore(n, 1), sb = b.permit_semaphore(n, 1);
    auto p = sa.acquire();
    EXPECT_TRUE(sb.release(p.token()));
    EXPECT_FALSE(sb.release(p.token()));  // only once
    EXPECT_TRUE(sb.try_acquire());
}

TYPED_TEST(SemaphoreContract, BadPermitCountsAreUsageErrors) {
    if (!TypeParam::kCounts) GTEST_SKIP() << "refused: see AtMostNHoldAtOnce";
    auto a = this->connect();
    EXPECT_THROW(a.semaphore(this->name("pool"), 0), UsageError);
    EXPECT_THROW(a.permit_semaphore(this->name("pool"), -1), UsageError);
}

}  // namespace deadbolt::conformance
