// deadbolt's Semaphore and MultiLock on a real ZooKeeper ensemble: Curator's
// InterProcessSemaphoreV2 layout (a gate Mutex, one lease node per permit), one waiter at a
// time counting the leases, nothing left by a waiter that gives up, and MultiLocks of
// overlapping names in opposite orders that never deadlock.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>
#include <vector>

#include "deadbolt/deadbolt.hpp"
#include "eventually.hpp"
#include "zk_ensemble.hpp"
#include "znodes.hpp"

using namespace std::chrono_literals;
using deadbolt::Client;
using deadbolt::test::children;
using deadbolt::test::eventually;
using deadbolt::test::queued;
using deadbolt::test::ZkEnsemble;
using Clock = std::chrono::steady_clock;

TEST(ZkSemaphore, PermitsAreCuratorsLeasesAndOnlyTheGatesHolderCountsThem) {
    auto& zk = ZkEnsemble::shared();
    auto a = Client::connect(zk.url());
    auto permit = a.permit_semaphore("zk-sem", 1).acquire();
    auto leases = children(zk, "/zk-sem/leases");
    ASSERT_EQ(leases.size(), 1u);
    // _c_<36-char guid>-lease-<10-digit sequence>, as Curator's semaphore names a lease.
    EXPECT_TRUE(leases[0].starts_with("_c_")) << leases[0];
    EXPECT_EQ(leases[0].find("-lease-"), 3u + 36u) << leases[0];
    EXPECT_EQ(leases[0].size(), 3u + 36u + 7u + 10u) << leases[0];
    EXPECT_TRUE(children(zk, "/zk-sem/locks").empty()) << "a granted permit leaves the gate";

    std::atomic<int> granted{0};
    std::vector<std::future<void>> waiters;
    for (int i = 0; i < 3; ++i)
        waiters.push_back(std::async(std::launch::async, [&] {
            auto c = Client::connect(zk.url());
            auto p = c.permit_semaphore("zk-sem", 1).acquire({.deadline = Clock::now() + 60s});
            ++granted;
            std::this_thread::sleep_for(100ms);
            p.release();
        }));
    // Three at the gate; only its holder put a lease beside the held one.
    ASSERT_TRUE(queued(zk, "/zk-sem/locks", 3));
    EXPECT_EQ(children(zk, "/zk-sem/leases").size(), 2u);
    EXPECT_EQ(granted, 0);
    permit.release();
    for (auto& w : waiters) w.get();
    EXPECT_EQ(granted, 3);
    EXPECT_TRUE(children(zk, "/zk-sem/leases").empty());
}

TEST(ZkSemaphore, AWaiterThatGivesUpLeavesNeitherALeaseNorAPlaceAtTheGate) {
    auto& zk = ZkEnsemble::shared();
    auto a = Client::connect(zk.url()), b = Client::connect(zk.url());
    auto sa = a.semaphore("zk-sem-quit", 2);
    sa.acquire();
    sa.acquire();
    auto sb = b.semaphore("zk-sem-quit", 2);
    EXPECT_FALSE(sb.try_acquire());
    EXPECT_EQ(sb.available(), 0);
    EXPECT_TRUE(eventually([&] { return children(zk, "/zk-sem-quit/leases").size() == 2; }));
    EXPECT_TRUE(children(zk, "/zk-sem-quit/locks").empty());
    sa.release();
    EXPECT_TRUE(sb.try_acquire());
    EXPECT_EQ(sb.available(), 0);
}

TEST(ZkSemaphore, APermitOfALostSessionComesBack) {
    auto& zk = ZkEnsemble::shared();
    auto b = Client::connect(zk.url());
    {
        auto a = Client::connect(zk.url());
        auto held = a.permit_semaphore("zk-sem-crash", 1).acquire();
        EXPECT_FALSE(b.permit_semaphore("zk-sem-crash", 1).try_acquire());
    }  // its client closes the session: the lease goes with it
    EXPECT_TRUE(b.permit_semaphore("zk-sem-crash", 1).acquire({.deadline = Clock::now() + 20s}));
}

TEST(ZkMultiLock, OverlappingMultiLocksInOppositeOrdersNeverDeadlock) {
    auto& zk = ZkEnsemble::shared();
    auto run = [&](const std::vector<std::string>& names) {
        auto c = Client::connect(zk.url());
        int got = 0;
        for (int i = 0; i < 15; ++i) {
            auto all = c.acquire_all(names, {}, {.deadline = Clock::now() + 30s});
            ++got;
            all.release();
        }
        return got;
    };
    auto one = std::async(std::launch::async, run, std::vector<std::string>{"zk-m-x", "zk-m-y"});
    auto two = std::async(std::launch::async, run, std::vector<std::string>{"zk-m-y", "zk-m-x"});
    EXPECT_EQ(one.get(), 15);
    EXPECT_EQ(two.get(), 15);
}

TEST(ZkMultiLock, EachNameIsTheMutexKazooAndCuratorTake) {
    auto& zk = ZkEnsemble::shared();
    auto c = Client::connect(zk.url());
    auto all = c.acquire_all({"zk-m-a", "zk-m-b"});
    ASSERT_EQ(all.fences().size(), 2u);
    EXPECT_NE(all.fences()[0].fence, all.fences()[1].fence);
    std::string out;
    zk.kazoo(R"(
import sys
from kazoo.client import KazooClient
from kazoo.exceptions import LockTimeout
zk = KazooClient(hosts=sys.argv[1]); zk.start()
lock = zk.Lock(sys.argv[2], extra_lock_patterns=["-lock-"])
try:
    print("got" if lock.acquire(timeout=0.5) else "busy", flush=True)
except LockTimeout:
    print("busy", flush=True)
zk.stop()
)",
             {"/zk-m-b"}, &out);
    EXPECT_EQ(out, "busy\n");
    all.release();
    EXPECT_TRUE(children(zk, "/zk-m-a").empty());
    EXPECT_TRUE(children(zk, "/zk-m-b").empty());
}
