// RWLock: readers share, a writer excludes all, a waiting writer is not starved by readers.
#include <gtest/gtest.h>

#include <mutex>
#include <shared_mutex>
#include <thread>

#include "deadbolt/deadbolt.hpp"
#include "redis_server.hpp"

using namespace std::chrono_literals;
using deadbolt::test::RedisServer;
using Clock = std::chrono::steady_clock;

template class std::unique_lock<deadbolt::RWLock>;
template class std::shared_lock<deadbolt::RWLock>;
static_assert(noexcept(std::declval<deadbolt::RWLock&>().unlock_shared()));

TEST(RWLock, ReadersShareAndExcludeTheWriter) {
    RedisServer srv;
    std::vector<deadbolt::Client> clients;
    std::vector<deadbolt::RWLock> locks;
    for (int i = 0; i < 4; ++i) {
        clients.push_back(deadbolt::Client::connect(srv.url()));
        locks.push_back(clients.back().rwlock("rw"));
    }
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(locks[i].try_lock_shared()) << i;
    EXPECT_EQ(srv.raw().cmd({"ZCARD", "{rw}:readers"}).integer, 3);
    EXPECT_EQ(locks[0].shared_lease().fence(), 0u);
    EXPECT_FALSE(locks[3].try_lock());
    for (int i = 0; i < 3; ++i) locks[i].unlock_shared();
    ASSERT_TRUE(locks[3].try_lock());
    EXPECT_GT(locks[3].lease().fence(), 0u);
    EXPECT_FALSE(locks[0].try_lock_shared());
    EXPECT_FALSE(locks[0].try_lock());
    locks[3].unlock();
    EXPECT_TRUE(locks[0].try_lock_shared());
    locks[0].unlock_shared();
}

TEST(RWLock, WaitingWriterHoldsBackNewReaders) {
    RedisServer srv;
    auto a = deadbolt::Client::connect(srv.url());
    auto w = deadbolt::Client::connect(srv.url());
    auto b = deadbolt::Client::connect(srv.url());
    auto ra = a.rwlock("rw");
    auto wr = w.rwlock("rw");
    auto rb = b.rwlock("rw");
    ra.lock_shared();
    std::atomic<bool> written{false};
    std::thread writer([&] {
        std::lock_guard lk(wr);
        written = true;
    });
    auto raw = srv.raw();
    for (auto until = Clock::now() + 10s;
         Clock::now() < until && raw.cmd({"EXISTS", "{rw}:claim"}).integer == 0;)
        std::this_thread::sleep_for(5ms);
    ASSERT_EQ(raw.cmd({"EXISTS", "{rw}:claim"}).integer, 1);
    EXPECT_FALSE(rb.try_lock_shared());  // a stream of readers cannot overtake the writer
    EXPECT_FALSE(written);
    ra.unlock_shared();
    writer.join();
    EXPECT_TRUE(written);
    EXPECT_TRUE(rb.try_lock_shared_for(5s));
    rb.unlock_shared();
}

TEST(RWLock, ReadLeaseIsRenewedAndADeadReaderExpires) {
    RedisServer srv;
    auto a = deadbolt::Client::connect(srv.url());
    auto b = deadbolt::Client::connect(srv.url());
    auto live = a.rwlock("rw", {.ttl = 300ms});
    auto writer = b.rwlock("rw");
    live.lock_shared();
    std::this_thread::sleep_for(900ms);  // three TTLs: only renewal keeps it
    EXPECT_TRUE(live.shared_lease().is_current());
    EXPECT_FALSE(writer.try_lock());
    live.unlock_shared();

    auto dead = a.rwlock("rw", {.ttl = 300ms, .auto_renew = false});
    dead.lock_shared();
    auto stop = dead.shared_lease().stop_token();
    ASSERT_TRUE(writer.try_lock_for(5s));
    EXPECT_TRUE(stop.stop_requested());
    writer.unlock();
}

TEST(RWLock, WriterThatGivesUpDropsItsClaim) {
    RedisServer srv;
    auto a = deadbolt::Client::connect(srv.url());
    auto b = deadbolt::Client::connect(srv.url());
    auto reader = a.rwlock("rw");
    auto writer = b.rwlock("rw");
    reader.lock_shared();
    EXPECT_FALSE(writer.try_lock_for(200ms));
    auto raw = srv.raw();
    for (auto until = Clock::now() + 5s;
         Clock::now() < until && raw.cmd({"EXISTS", "{rw}:claim"}).integer == 1;)
        std::this_thread::sleep_for(5ms);
    EXPECT_EQ(raw.cmd({"EXISTS", "{rw}:claim"}).integer, 0);
    auto other = a.rwlock("rw");
    std::thread([&] {
        EXPECT_TRUE(other.try_lock_shared());
        other.unlock_shared();
    }).join();
    reader.unlock_shared();
}
