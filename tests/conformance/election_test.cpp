// LeaderElection conformance: one leader at a time, terms that rise, observers and waiting
// candidates woken by a resignation.
#include <gtest/gtest.h>

#include <thread>

#include "contract.hpp"

using namespace std::chrono_literals;

namespace deadbolt::conformance {

template <class B>
class ElectionContract : public Contract<B> {};

TYPED_TEST_SUITE(ElectionContract, Backends, BackendName);

TYPED_TEST(ElectionContract, OneLeaderAndItsValueAreSeenByAll) {
    auto n = this->name("svc");
    auto a = this->connect(), b = this->connect();
    if (!TypeParam::kElects) {
        expect_refused([&] { (void)a.election(n); }, "LeaderElection");
        expect_refused([&] { (void)a.campaign(n, "10.0.0.1:80"); }, "LeaderElection");
        return;
    }
    auto ea = a.election(n), eb = b.election(n);
    ea.campaign("10.0.0.1:80");
    EXPECT_TRUE(ea.leading());
    EXPECT_THROW(eb.campaign("10.0.0.2:80", {.deadline = Clock::now()}), LockError);
    auto seen = eb.leader();
    EXPECT_TRUE(seen.elected);
    EXPECT_EQ(seen.value, "10.0.0.1:80");
    ea.proclaim("10.0.0.1:81");
    EXPECT_EQ(eb.leader().value, "10.0.0.1:81");
}

TYPED_TEST(ElectionContract, AResignationWakesACandidateWithAHigherTerm) {
    if (!TypeParam::kElects) GTEST_SKIP() << "refused: see OneLeaderAndItsValueAreSeenByAll";
    auto n = this->name("svc");
    auto a = this->connect(), b = this->connect();
    auto ea = a.election(n, {.ttl = 60s}), eb = b.election(n);
    auto term = ea.campaign("a").fence();
    std::thread resigner([&] {
        std::this_thread::sleep_for(200ms);
        ea.resign();
    });
    // Without a wake-up the candidate would sleep until the 60 s TTL, past its deadline.
    auto deadline = Clock::now() + 20s;
    auto& mine = eb.campaign("b", {.deadline = deadline});
    EXPECT_LT(Clock::now(), deadline) << kWokenLate;
    resigner.join();
    EXPECT_GT(mine.fence(), term);
    EXPECT_EQ(ea.leader().value, "b");
}

TYPED_TEST(ElectionContract, AnObserverIsWokenByEveryChange) {
    if (!TypeParam::kElects) GTEST_SKIP() << "refused: see OneLeaderAndItsValueAreSeenByAll";
    auto n = this->name("svc");
    auto a = this->connect(), b = this->connect();
    auto ea = a.election(n, {.ttl = 60s}), eb = b.election(n);
    ea.campaign("first");
    auto seen = eb.leader();
    std::thread changer([&] {
        std::this_thread::sleep_for(200ms);
        ea.proclaim("second");
    });
    auto deadline = Clock::now() + 20s;
    auto now = eb.observe(seen, {.deadline = deadline});
    EXPECT_LT(Clock::now(), deadline) << kWokenLate;
    changer.join();
    EXPECT_EQ(now.value, "second");
    EXPECT_EQ(now.term, seen.term);
}

}  // namespace deadbolt::conformance
