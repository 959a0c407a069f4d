// RWLock conformance: readers share, a writer excludes readers and writers, and a writer
// waiting for readers is woken by the last one's release.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "contract.hpp"
#include "eventually.hpp"

using namespace std::chrono_literals;

namespace deadbolt::conformance {

template <class B>
class RWLockContract : public Contract<B> {};

TYPED_TEST_SUITE(RWLockContract, Backends, BackendName);

TYPED_TEST(RWLockContract, ReadersShareAndKeepAWriterOut) {
    auto n = this->name("doc");
    auto a = this->connect(), b = this->connect(), w = this->connect();
    if (!TypeParam::kShares) {
        expect_refused([&] { (void)a.rwlock(n); }, "RWLock");
        expect_refused([&] { (void)a.acquire(n, LockMode::shared, {}); }, "RWLock");
        expect_refused([&] { (void)a.acquire(n, LockMode::write, {}); }, "RWLock");
        return;
    }
    auto r1 = a.acquire(n, LockMode::shared, {});
    auto r2 = b.acquire(n, LockMode::shared, {}, {.deadline = Clock::now()});
    EXPECT_TRUE(r2.valid());
    EXPECT_THROW(w.acquire(n, LockMode::write, {}, {.deadline = Clock::now()}), LockError);
}

TYPED_TEST(RWLockContract, AWriterKeepsReadersAndWritersOut) {
    if (!TypeParam::kShares) GTEST_SKIP() << "refused: see ReadersShareAndKeepAWriterOut";
    auto n = this->name("doc");
    auto a = this->connect(), b = this->connect();
    auto w = a.acquire(n, LockMode::write, {});
    EXPECT_THROW(b.acquire(n, LockMode::shared, {}, {.deadline = Clock::now()}), LockError);
    EXPECT_THROW(b.acquire(n, LockMode::write, {}, {.deadline = Clock::now()}), LockError);
    w.release();
    EXPECT_TRUE(b.acquire(n, LockMode::shared, {}, {.deadline = Clock::now() + 10s}).valid());
}

TYPED_TEST(RWLockContract, TheLastReaderOutWakesAWaitingWriter) {
    if (!TypeParam::kShares) GTEST_SKIP() << "refused: see ReadersShareAndKeepAWriterOut";
    auto n = this->name("doc");
    auto a = this->connect(), b = this->connect(), w = this->connect();
    auto r1 = a.acquire(n, LockMode::shared, {.ttl = 60s});
    auto r2 = b.acquire(n, LockMode::shared, {.ttl = 60s});
    std::thread readers_leave([&] {
        std::this_thread::sleep_for(200ms);
        r1.release();
        r2.release();
    });
    // Without a wake-up the writer would sleep until the readers' 60 s TTL, past its deadline.
    auto deadline = Clock::now() + 20s;
    auto got = w.acquire(n, LockMode::write, {}, {.deadline = deadline});
    EXPECT_LT(Clock::now(), deadline) << kWokenLate;
    readers_leave.join();
    EXPECT_TRUE(got.valid());
    EXPECT_GT(got.fence(), 0u);
}

TYPED_TEST(RWLockContract, AWaitingWriterKeepsNewReadersOut) {
    if (!TypeParam::kShares) GTEST_SKIP() << "refused: see ReadersShareAndKeepAWriterOut";
    auto n = this->name("doc");
    auto a = this->connect(), b = this->connect(), w = this->connect();
    auto r1 = a.acquire(n, LockMode::shared, {.ttl = 60s});
    std::atomic<bool> queued{false};
    std::thread writer([&] {
        auto got = w.acquire(
            n, LockMode::write, {},
            {.deadline = Clock::now() + 20s, .on_wait = [&](const WaitInfo&) { queued = true; }});
        EXPECT_GT(got.fence(), 0u);
    });
    ASSERT_TRUE(test::eventually([&] { return queued.load(); }));
    // Readers that come after a waiting writer go after it: writers are not starved.
    EXPECT_THROW(b.acquire(n, LockMode::shared, {}, {.deadline = Clock::now()}), LockError);
    r1.release();
    writer.join();
    EXPECT_TRUE(b.acquire(n, LockMode::shared, {}, {.deadline = Clock::now() + 10s}).valid());
}

TYPED_TEST(RWLockContract, WritersFencesRise) {
    if (!TypeParam::kShares) GTEST_SKIP() << "refused: see ReadersShareAndKeepAWriterOut";
    auto n = this->name("doc");
    auto a = this->connect(), b = this->connect();
    std::uint64_t last = 0;
    for (int i = 0; i < 6; ++i) {
        auto l = (i % 2 ? a : b).acquire(n, LockMode::write, {});
        EXPECT_GT(l.fence(), last) << i;
        last = l.fence();
        l.release();
        (i % 2 ? b : a).acquire(n, LockMode::shared, {}).release();  // readers in between
    }
}

}  // namespace deadbolt::conformance
