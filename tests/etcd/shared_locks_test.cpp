// deadbolt's RWLock, ReentrantMutex and MultiLock on real etcd members: the layout etcdctl
// sees, holds that outlive the client that made the key, MultiLocks that never deadlock (the
// conformance suites cover the rest).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <sstream>
#include <thread>
#include <vector>

#include "deadbolt/deadbolt.hpp"
#include "etcd_cluster.hpp"

using namespace std::chrono_literals;
using deadbolt::Client;
using deadbolt::test::EtcdCluster;
using Clock = std::chrono::steady_clock;

namespace {

// Every key and value under name/, oldest first, as "key=value" lines (etcdctl's view).
std::string keys_under(const EtcdCluster& c, const std::string& name) {
    std::string out;
    c.etcdctl({"get", "--prefix", "--sort-by=CREATE", name + "/"}, &out);
    std::istringstream in(out);
    std::string listed;
    for (std::string key, value; std::getline(in, key) && std::getline(in, value);)
        listed += key + "=" + value + "\n";
    return listed;
}

}  // namespace

TEST(EtcdRWLock, ReadersAndAWriterAreKeysInOneQueueThatEtcdctlSees) {
    auto& etcd = EtcdCluster::shared();
    auto a = Client::connect(etcd.url()), b = Client::connect(etcd.url());
    auto r1 = a.acquire("rw-layout", deadbolt::LockMode::shared, {});
    auto r2 = b.acquire("rw-layout", deadbolt::LockMode::shared, {});
    auto keys = keys_under(etcd, "rw-layout");
    EXPECT_EQ(std::count(keys.begin(), keys.end(), '\n'), 2) << keys;
    EXPECT_NE(keys.find("rw-layout/read-"), std::string::npos) << keys;
    auto st = a.status("rw-layout");
    EXPECT_EQ(st.kind, "readers");
    EXPECT_EQ(st.holders, 2);
    EXPECT_EQ(st.last_fence, 0u) << "readers are not fenced";
    r1.release();
    r2.release();
    EXPECT_EQ(keys_under(etcd, "rw-layout"), "");
    auto w = a.acquire("rw-layout", deadbolt::LockMode::write, {});
    EXPECT_EQ(a.status("rw-layout").kind, "mutex") << "a writer is a Mutex's contender";
}

TEST(EtcdReentrant, TheOwnersHoldsAreCountedOnOneKey) {
    auto& etcd = EtcdCluster::shared();
    auto a = Client::connect(etcd.url()), b = Client::connect(etcd.url());
    auto one = a.reentrant_mutex("re-layout", {}, "worker 7");
    auto two = b.reentrant_mutex("re-layout", {}, "worker 7");
    one.lock();
    one.lock();
    ASSERT_TRUE(two.try_lock());
    auto keys = keys_under(etcd, "re-layout");
    EXPECT_EQ(std::count(keys.begin(), keys.end(), '\n'), 1) << keys;
    EXPECT_NE(keys.find("=3 worker 7"), std::string::npos) << keys;
    EXPECT_EQ(a.status("re-layout").kind, "reentrant");
    one.unlock();
    EXPECT_NE(keys_under(etcd, "re-layout").find("=2 worker 7"), std::string::npos);
    one.unlock();
    two.unlock();
    EXPECT_EQ(keys_under(etcd, "re-layout"), "") << "the last release deletes the key";
}

TEST(EtcdReentrant, AHoldOnAnotherClientsKeyOutlivesThatClient) {
    auto& etcd = EtcdCluster::shared();
    auto b = Client::connect(etcd.url()), other = Client::connect(etcd.url());
    auto two = b.reentrant_mutex("re-outlive", {.ttl = 2s}, "worker 8");
    {
        auto a = Client::connect(etcd.url());
        auto one = a.reentrant_mutex("re-outlive", {.ttl = 2s}, "worker 8");
        one.lock();
        ASSERT_TRUE(two.try_lock());
        one.unlock();
    }                                 // a is gone; its key's lease is kept by b's renewals now
    std::this_thread::sleep_for(4s);  // twice the lease's TTL
    EXPECT_FALSE(two.lease().lost());
    EXPECT_TRUE(two.lease().valid());
    EXPECT_TRUE(two.lease().is_current());
    EXPECT_FALSE(other.reentrant_mutex("re-outlive", {}, "someone else").try_lock());
    two.unlock();
    EXPECT_TRUE(other.reentrant_mutex("re-outlive", {}, "someone else").try_lock_for(10s));
}

TEST(EtcdMultiLock, EveryNamesKeyComesFromOneTxnAndEtcdctlLockWaitsForEach) {
    auto& etcd = EtcdCluster::shared();
    auto c = Client::connect(etcd.url());
    auto all = c.acquire_all({"multi-a", "multi-b", "multi-c"}, {});
    auto fences = all.fences();
    ASSERT_EQ(fences.size(), 3u);
    EXPECT_EQ(fences[0].fence, fences[2].fence) << "one Txn: one revision for every key";
    // Each name is an ordinary lock that etcd's own tools see as held.
    std::string out;
    EXPECT_NE(etcd.etcdctl({"lock", "multi-b", "--", "true"}, &out, 2s), 0) << out;
    all.release();
    EXPECT_EQ(etcd.etcdctl({"lock", "multi-b", "--", "true"}, &out, 10s), 0) << out;
    EXPECT_EQ(keys_under(etcd, "multi-a") + keys_under(etcd, "multi-c"), "");
}

TEST(EtcdMultiLock, OverlappingMultiLocksInOppositeOrderNeverDeadlock) {
    auto& etcd = EtcdCluster::shared();
    std::vector<std::string> one{"ring-a", "ring-b", "ring-c"}, other{"ring-c", "ring-b", "ring-a"};
    std::atomic<int> inside{0}, overlaps{0}, done{0};
    auto worker = [&](const std::vector<std::string>& names) {
        auto c = Client::connect(etcd.url());
        for (int i = 0; i < 15; ++i) {
            auto l = c.acquire_all(names, {}, {.deadline = Clock::now() + 30s});
            if (inside.fetch_add(1) != 0) ++overlaps;
            inside.fetch_sub(1);
            l.release();
            ++done;
        }
    };
    std::thread a(worker, one), b(worker, other), d(worker, one);
    a.join();
    b.join();
    d.join();
    EXPECT_EQ(done.load(), 45) << "a MultiLock gave up: a deadlock";
    EXPECT_EQ(overlaps.load(), 0);
}
