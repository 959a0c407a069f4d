// Mutex conformance: what every backend must do for an exclusive lock, run against each.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "contract.hpp"
#include "eventually.hpp"

using namespace std::chrono_literals;

namespace deadbolt::conformance {

template <class B>
class MutexContract : public Contract<B> {};

TYPED_TEST_SUITE(MutexContract, Backends, BackendName);

TYPED_TEST(MutexContract, ExcludesOtherClientsUntilReleased) {
    auto n = this->name("job");
    auto a = this->connect(), b = this->connect();
    auto held = a.acquire(n);
    EXPECT_THROW(b.acquire(n, {}, {.deadline = Clock::now()}), LockError);
    held.release();
    auto next = b.acquire(n, {}, {.deadline = Clock::now()});
    EXPECT_GT(next.fence(), held.fence());
}

TYPED_TEST(MutexContract, FencesStrictlyIncreaseAcrossClients) {
    auto n = this->name("job");
    auto a = this->connect(), b = this->connect();
    std::uint64_t last = 0;
    for (int i = 0; i < 20; ++i) {
        auto l = (i % 2 ? a : b).acquire(n);
        EXPECT_GT(l.fence(), last) << i;
        last = l.fence();
    }
}

// A Mutex object keeps what it worked out for its name from one acquisition to the next
// (SpareClaim): each must still start as new, after a grant, a wait given up or a refusal.
TYPED_TEST(MutexContract, AMutexLockedAgainAndAgainStartsAsNewEachTime) {
    auto n = this->name("job");
    auto a = this->connect(), b = this->connect();
    auto m = a.mutex(n);
    std::uint64_t last = 0;
    for (int i = 0; i < 3; ++i) {
        m.lock();
        EXPECT_GT(m.lease().fence(), last) << i;
        last = m.lease().fence();
        EXPECT_THROW(b.acquire(n, {}, {.deadline = Clock::now()}), LockError) << i;
        m.unlock();
    }
    auto blocker = b.acquire(n);
    EXPECT_FALSE(m.try_lock_for(300ms));  // waited, then gave up
    EXPECT_FALSE(m.try_lock());           // refused at once
    blocker.release();
    ASSERT_TRUE(m.try_lock_for(10s));
    EXPECT_GT(m.lease().fence(), blocker.fence());
    m.unlock();
    // Nothing of m's is left on the server: another client takes the lock at once.
    EXPECT_TRUE(b.acquire(n, {}, {.deadline = Clock::now()}).valid());
}

TYPED_TEST(MutexContract, AWaiterIsWokenByTheReleaseNotByTheTtl) {
    auto n = this->name("job");
    auto a = this->connect(), b = this->connect();
    auto held = a.acquire(n, {.ttl = 60s});
    std::thread releaser([&] {
        std::this_thread::sleep_for(200ms);
        held.release();
    });
    // Without a wake-up the waiter would sleep until the 60 s TTL, past its deadline.
    auto deadline = Clock::now() + 20s;
    auto got = b.acquire(n, {}, {.deadline = deadline});
    EXPECT_LT(Clock::now(), deadline) << kWokenLate;
    releaser.join();
    EXPECT_TRUE(got.valid());
}

TYPED_TEST(MutexContract, AnExpiredHolderFreesTheLock) {
    auto n = this->name("job");
    auto a = this->connect(), b = this->connect();
    if (!TypeParam::kExpiresAlone) {  // refused, with the reason
        EXPECT_THROW(a.acquire(n, {.ttl = this->kShort, .auto_renew = false}), UsageError);
        return;
    }
    auto dead = a.acquire(n, {.ttl = this->kShort, .auto_renew = false});
    auto got = b.acquire(n, {}, {.deadline = Clock::now() + 10s});
    EXPECT_GT(got.fence(), dead.fence());
}

TYPED_TEST(MutexContract, ALossFiresTheStopTokenAndOnLostOnce) {
    auto n = this->name("job");
    std::atomic<int> lost{0};
    auto a = this->connect();
    auto held = a.acquire(n, {.ttl = 2 * this->kShort,
                              .on_lost = [&](std::string_view, std::error_code) { ++lost; }});
    auto early = held.stop_token();  // the token is made when first asked for
    EXPECT_FALSE(early.stop_requested());
    this->backend.take_away(n);
    EXPECT_TRUE(test::eventually([&] { return early.stop_requested(); }));
    EXPECT_TRUE(held.stop_token().stop_requested()) << "asked for again after the loss";
    std::this_thread::sleep_for(300ms);  // further renewals must not report it again
    EXPECT_EQ(lost.load(), 1);
    EXPECT_TRUE(held.lost());
}

TYPED_TEST(MutexContract, ACancelledWaitEndsAtOnce) {
    auto n = this->name("job");
    auto a = this->connect(), b = this->connect();
    auto held = a.acquire(n, {.ttl = 60s});
    std::stop_source stop;
    std::thread canceller([&] {
        std::this_thread::sleep_for(100ms);
        stop.request_stop();
    });
    auto t0 = Clock::now();
    try {
        b.acquire(n, {}, {.cancel = stop.get_token()});
        ADD_FAILURE() << "acquired a held lock";
    } catch (const LockError& e) {
        EXPECT_EQ(e.code(), errc::cancelled);
    }
    canceller.join();
    EXPECT_LT(Clock::now() - t0, 10s);
}

TYPED_TEST(MutexContract, BadInputIsAUsageErrorAndWritesNothing) {
    auto a = this->connect();
    EXPECT_THROW(a.acquire(""), UsageError);
    EXPECT_THROW(a.acquire(std::string(kMaxNameBytes + 1, 'x')), UsageError);
    EXPECT_THROW(a.acquire(this->name("job"), {.ttl = 0ms}), UsageError);
    EXPECT_FALSE(a.status(this->name("job")).held);
    // Binary names are names.
    auto bin = this->name(std::string("a\0b\xff", 4));
    auto l = a.acquire(bin);
    EXPECT_TRUE(a.status(bin).held);
}

}  // namespace deadbolt::conformance
