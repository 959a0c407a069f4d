// CountDownLatch conformance: waiters are woken when the count reaches zero, and only the
// count_down that opens it says so; or, where counts cannot add up, refused with the reason.
#include <gtest/gtest.h>

#include <thread>

#include "contract.hpp"

using namespace std::chrono_literals;

namespace deadbolt::conformance {

template <class B>
class LatchContract : public Contract<B> {};

TYPED_TEST_SUITE(LatchContract, Backends, BackendName);

TYPED_TEST(LatchContract, WaitersAreWokenWhenTheCountReachesZero) {
    auto n = this->name("start");
    auto a = this->connect(), b = this->connect();
    if (!latches<TypeParam>()) {
        expect_refused([&] { (void)a.latch(n); }, "CountDownLatch");
        return;
    }
    auto la = a.latch(n), lb = b.latch(n);
    EXPECT_TRUE(la.try_set_count(2));
    EXPECT_FALSE(lb.try_set_count(5));  // set already
    EXPECT_FALSE(lb.wait_for(0ms));
    std::thread counter([&] {
        std::this_thread::sleep_for(200ms);
        EXPECT_FALSE(la.count_down());
        EXPECT_TRUE(la.count_down());  // the one that opens it
        EXPECT_FALSE(la.count_down());
    });
    EXPECT_TRUE(lb.wait_for(20s));
    counter.join();
    EXPECT_EQ(lb.count(), 0);
}

TYPED_TEST(LatchContract, AnUnsetLatchIsOpen) {
    if (!latches<TypeParam>()) GTEST_SKIP() << "refused: see WaitersAreWokenWhenTheCountReachesZero";
    auto l = this->connect().latch(this->name("never-set"));
    EXPECT_TRUE(l.wait_for(0ms));
    EXPECT_THROW(l.try_set_count(0), UsageError);
}

}  // namespace deadbolt::conformance
