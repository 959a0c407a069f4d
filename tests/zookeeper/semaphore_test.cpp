// deadbolt's Semaphore, MultiLock, CountDownLatch and guarded writes on a real ZooKeeper
// ensemble: Curator's InterProcessSemaphoreV2 layout (a gate Mutex, one lease node per
// permit), one waiter at a time counting the leases, nothing left by a waiter that gives up,
// MultiLocks of overlapping names in opposite orders that never deadlock, a latch that opens
// at its TTL, and writes that land only while the lock is held.
#include <gtest/gtest.h>

#include <unistd.h>

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
using deadbolt::test::data;
using deadbolt::test::delete_node;
using deadbolt::test::eventually;
using deadbolt::test::packets;
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

TEST(ZkSemaphore, StatusListAndForceUnlockSeeTheSemaphoreNotItsGateAndLeases) {
    auto& zk = ZkEnsemble::shared();
    auto a = Client::connect(zk.url()), b = Client::connect(zk.url());
    auto sa = a.semaphore("zk-sem-admin", 2);
    sa.acquire();
    sa.acquire();
    auto waiter = std::async(std::launch::async, [&] {
        return b.permit_semaphore("zk-sem-admin", 2).acquire({.deadline = Clock::now() + 30s});
    });
    ASSERT_TRUE(queued(zk, "/zk-sem-admin/leases", 3));  // ours and the gate holder's
    auto st = a.status("zk-sem-admin");
    EXPECT_EQ(st.kind, "semaphore");
    EXPECT_TRUE(st.held);
    EXPECT_EQ(st.holders, 2) << "the gate holder's lease waits";
    EXPECT_EQ(st.waiters, 1);
    ASSERT_FALSE(st.held_by.empty());
    EXPECT_EQ(st.held_by[0].pid, static_cast<int>(getpid()));
    std::vector<std::string> names;
    for (const auto& l : a.list("zk-sem-admin*")) names.push_back(l.name);
    EXPECT_EQ(names, (std::vector<std::string>{"zk-sem-admin"}));
    EXPECT_EQ(a.force_unlock("zk-sem-admin"), "semaphore");
    EXPECT_TRUE(waiter.get().valid()) << "the waiter is woken and takes a permit";
}

TEST(ZkGuardedWrite, LandsOnlyWhileEveryNodeOfTheHoldingLives) {
    auto& zk = ZkEnsemble::shared();
    auto a = Client::connect(zk.url()), b = Client::connect(zk.url());
    auto held = a.acquire("zk-guard");
    EXPECT_TRUE(held.put_if_current("zk-guard-data/value", "one"));
    EXPECT_EQ(data(zk, "/zk-guard-data/value"), "one\n");
    EXPECT_TRUE(held.put_if_current("zk-guard-data/value", "two")) << "an existing node";
    // Deleted from outside (an administrator, a session the ensemble expired): refused.
    auto kids = children(zk, "/zk-guard");
    ASSERT_EQ(kids.size(), 1u);
    delete_node(zk, "/zk-guard/" + kids[0]);
    EXPECT_FALSE(held.put_if_current("zk-guard-data/value", "stale"));
    EXPECT_EQ(data(zk, "/zk-guard-data/value"), "two\n") << "nothing of the refused write";
    EXPECT_TRUE(held.lost());
    auto next = b.acquire("zk-guard", {}, {.deadline = Clock::now() + 10s});
    EXPECT_TRUE(next.put_if_current("zk-guard-data/value", "three"));
    EXPECT_EQ(data(zk, "/zk-guard-data/value"), "three\n");

    // A MultiLock's write needs every name still held.
    auto all = a.acquire_all({"zk-guard-m1", "zk-guard-m2"});
    EXPECT_TRUE(all.put_if_current("zk-guard-data/multi", "m"));
    delete_node(zk, "/zk-guard-m2/" + children(zk, "/zk-guard-m2").at(0));
    EXPECT_FALSE(all.put_if_current("zk-guard-data/multi", "stale"));
    EXPECT_EQ(data(zk, "/zk-guard-data/multi"), "m\n");
}

TEST(ZkLatch, OpensAtItsTtlAndLeavesNothingAndForeignDataIsNamed) {
    auto& zk = ZkEnsemble::shared();
    auto a = Client::connect(zk.url());
    auto l = a.latch("zk-latch/ttl");
    ASSERT_TRUE(l.try_set_count(3, 1500ms));
    EXPECT_EQ(data(zk, "/zk-latch/ttl"), "3 1500\n") << "the count and the TTL it opens at";
    EXPECT_FALSE(l.count_down());
    EXPECT_EQ(l.count(), 2);
    // Nobody counts down again: the TTL opens it, and the waiter wakes without a message.
    EXPECT_TRUE(l.wait_for(20s));
    EXPECT_EQ(l.count(), 0);
    EXPECT_TRUE(eventually([&] { return children(zk, "/zk-latch").empty(); }))
        << "the first reader after its expiry deletes it";
    EXPECT_TRUE(l.try_set_count(1)) << "an expired latch may be set again";
    EXPECT_TRUE(l.count_down());

    zk.kazoo(R"(
import sys
from kazoo.client import KazooClient
zk = KazooClient(hosts=sys.argv[1]); zk.start(); zk.create(sys.argv[2], b"hello", makepath=True)
zk.stop()
)",
             {"/zk-latch/foreign"});
    try {
        (void)a.latch("zk-latch/foreign").count();
        ADD_FAILURE() << "foreign data is not a count";
    } catch (const deadbolt::Error& e) {
        EXPECT_EQ(e.code(), make_error_code(deadbolt::errc::wrong_type));
        EXPECT_NE(std::string(e.what()).find("not a latch"), std::string::npos) << e.what();
    }
    EXPECT_EQ(data(zk, "/zk-latch/foreign"), "hello\n") << "and it is left alone";
}

TEST(ZkLatch, AWaiterSleepsThroughCountDownsThatDoNotOpenIt) {
    auto& zk = ZkEnsemble::shared();
    auto a = Client::connect(zk.url()), b = Client::connect(zk.url());
    auto l = a.latch("zk-latch-quiet");
    ASSERT_TRUE(l.try_set_count(3));
    auto waiter =
        std::async(std::launch::async, [&] { return b.latch("zk-latch-quiet").wait_for(60s); });
    std::this_thread::sleep_for(500ms);
    EXPECT_FALSE(l.count_down());  // the waiter's watch fires: it must watch again, not poll
    std::this_thread::sleep_for(300ms);
    auto before = packets(zk);
    std::this_thread::sleep_for(2s);
    EXPECT_LT(packets(zk) - before, 100);
    EXPECT_FALSE(l.count_down());
    EXPECT_TRUE(l.count_down());
    EXPECT_TRUE(waiter.get());
}
