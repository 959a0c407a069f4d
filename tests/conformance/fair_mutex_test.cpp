// FairMutex conformance: first come, first served, across processes; or, where a backend
// cannot keep one queue, refused at once with the reason.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "contract.hpp"
#include "eventually.hpp"

using namespace std::chrono_literals;

namespace deadbolt::conformance {

template <class B>
class FairMutexContract : public Contract<B> {};

TYPED_TEST_SUITE(FairMutexContract, Backends, BackendName);

TYPED_TEST(FairMutexContract, WaitersAreServedInTheOrderTheyCame) {
    auto n = this->name("queue");
    auto a = this->connect();
    if (!TypeParam::kQueues) {
        expect_refused([&] { (void)a.fair_mutex(n); }, "FairMutex");
        expect_refused([&] { (void)a.acquire(n, LockMode::fair, {}); }, "FairMutex");
        return;
    }
    auto held = a.acquire(n, LockMode::fair, {.ttl = 60s});
    std::mutex m;
    std::vector<int> order;
    std::vector<std::thread> waiters;
    // on_wait runs after every refusal, also after this loop has moved on: the flags outlive it.
    std::array<std::atomic<bool>, 3> queued{};
    for (int i = 0; i < 3; ++i) {
        waiters.emplace_back([&, i] {
            auto c = this->connect();
            auto l = c.acquire(n, LockMode::fair, {},
                               {.deadline = Clock::now() + 30s,
                                .on_wait = [&](const WaitInfo&) { queued.at(i) = true; }});
            std::lock_guard lk(m);
            order.push_back(i);
        });
        // The next one comes only once this one has been refused, so it is queued behind it:
        // and, where the server keeps the queue, once it waits there.
        ASSERT_TRUE(test::eventually([&] { return queued.at(i).load(); }));
        if constexpr (requires { this->backend.waiting(n); }) {
            ASSERT_TRUE(test::eventually([&] { return this->backend.waiting(n) == i + 1; }))
                << "waiter " << i << " never waited in the server";
        }
    }
    held.release();
    for (auto& t : waiters) t.join();
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
}

TYPED_TEST(FairMutexContract, ExcludesAndFencesRise) {
    if (!TypeParam::kQueues) GTEST_SKIP() << "refused: see WaitersAreServedInTheOrderTheyCame";
    auto n = this->name("job");
    auto a = this->connect(), b = this->connect();
    auto held = a.acquire(n, LockMode::fair, {});
    EXPECT_THROW(b.acquire(n, LockMode::fair, {}, {.deadline = Clock::now()}), LockError);
    auto first = held.fence();
    held.release();
    auto next = b.acquire(n, LockMode::fair, {}, {.deadline = Clock::now() + 10s});
    EXPECT_GT(next.fence(), first);
}

}  // namespace deadbolt::conformance
