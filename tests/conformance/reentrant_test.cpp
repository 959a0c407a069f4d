// ReentrantMutex conformance: an owner takes it again and keeps its fence; everyone else
// waits until every hold is released.
#include <gtest/gtest.h>

#include <thread>

#include "contract.hpp"

using namespace std::chrono_literals;

namespace deadbolt::conformance {

template <class B>
class ReentrantContract : public Contract<B> {};

TYPED_TEST_SUITE(ReentrantContract, Backends, BackendName);

TYPED_TEST(ReentrantContract, AnOwnerReentersAndOthersWaitForTheLastRelease) {
    auto n = this->name("job");
    auto a = this->connect(), b = this->connect();
    if (!TypeParam::kReenters) {
        expect_refused([&] { (void)a.reentrant_mutex(n, {}, "owner-a"); }, "ReentrantMutex");
        return;
    }
    auto mine = a.reentrant_mutex(n, {}, "owner-a");
    auto theirs = b.reentrant_mutex(n, {}, "owner-b");
    mine.lock();
    auto fence = mine.lease().fence();
    mine.lock();  // again: same owner
    EXPECT_EQ(mine.hold_count(), 2u);
    EXPECT_EQ(mine.lease().fence(), fence);
    EXPECT_FALSE(theirs.try_lock());
    mine.unlock();
    EXPECT_FALSE(theirs.try_lock());  // one hold is left
    mine.unlock();
    EXPECT_TRUE(theirs.try_lock_for(10s));
    EXPECT_GT(theirs.lease().fence(), fence);
    theirs.unlock();
}

TYPED_TEST(ReentrantContract, TheSameOwnerIdSharesAHoldingAcrossClients) {
    if (!TypeParam::kReenters) GTEST_SKIP() << "refused: see AnOwnerReentersAndOthersWait...";
    auto n = this->name("job");
    auto a = this->connect(), b = this->connect();
    auto one = a.reentrant_mutex(n, {}, "worker-7");
    auto two = b.reentrant_mutex(n, {}, "worker-7");
    one.lock();
    EXPECT_TRUE(two.try_lock());  // an owner id names one owner wherever it runs
    two.unlock();
    one.unlock();
}

TYPED_TEST(ReentrantContract, AWaiterIsWokenByTheLastRelease) {
    if (!TypeParam::kReenters) GTEST_SKIP() << "refused: see AnOwnerReentersAndOthersWait...";
    auto n = this->name("job");
    auto a = this->connect(), b = this->connect();
    auto mine = a.reentrant_mutex(n, {.ttl = 60s}, "owner-a");
    auto theirs = b.reentrant_mutex(n, {}, "owner-b");
    mine.lock();
    mine.lock();
    std::thread releaser([&] {
        std::this_thread::sleep_for(200ms);
        mine.unlock();
        mine.unlock();
    });
    // Without a wake-up the waiter would sleep until the 60 s TTL, past its deadline.
    auto deadline = Clock::now() + 20s;
    EXPECT_TRUE(theirs.try_lock_until(deadline));
    EXPECT_LT(Clock::now(), deadline) << kWokenLate;
    releaser.join();
    theirs.unlock();
}

}  // namespace deadbolt::conformance
