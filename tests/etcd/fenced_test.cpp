// Fenced data on real etcd members: a holder whose lease ran out writes with its stale fence
// and is refused; compare-and-set loses no update; the data keeps its own lease; a write
// guarded by the lock itself (put_if_current) lands only while the lock is still ours.
#include <gtest/gtest.h>

#include <algorithm>

#include "deadbolt/deadbolt.hpp"
#include "etcd_cluster.hpp"

using namespace std::chrono_literals;
using deadbolt::Client;
using deadbolt::test::EtcdCluster;

TEST(EtcdFenced, AStaleHoldersWriteIsRefusedAfterTheNextHolderWrote) {
    auto& etcd = EtcdCluster::shared();
    auto c = Client::connect(etcd.url());
    auto old = c.acquire("fenced-res");
    auto stale = old.fence();
    // The holder "pauses"; its key is taken away and the next holder comes in.
    ASSERT_EQ(etcd.etcdctl({"del", "--prefix", "fenced-res/"}), 0);
    auto fresh = c.acquire("fenced-res", {}, {.deadline = std::chrono::steady_clock::now() + 10s});
    ASSERT_GT(fresh.fence(), stale);
    EXPECT_TRUE(c.fenced_set("fenced-record", "from-new-holder", fresh.fence()).accepted);
    auto late = c.fenced_set("fenced-record", "late-write-from-paused-holder", stale);
    EXPECT_FALSE(late.accepted);
    EXPECT_TRUE(late.stale_fence);
    EXPECT_EQ(late.highest, fresh.fence());
    std::string out;
    etcd.etcdctl({"get", "--print-value-only", "fenced-record"}, &out);
    EXPECT_EQ(out, "from-new-holder\n");
    EXPECT_TRUE(c.fenced_set("fenced-record", "second", fresh.fence()).accepted);
    EXPECT_THROW(c.fenced_set("fenced-record", "x", 0), deadbolt::UsageError);
}

TEST(EtcdFenced, CompareAndSetLosesNoUpdateAndAnyPutMovesTheVersion) {
    auto& etcd = EtcdCluster::shared();
    auto c = Client::connect(etcd.url());
    auto a = c.fenced_get("fenced-n"), b = c.fenced_get("fenced-n");
    EXPECT_FALSE(a.value);
    EXPECT_EQ(a.version, 0u);
    EXPECT_TRUE(c.fenced_cas("fenced-n", "1", 100, a.version).accepted);
    auto moved = c.fenced_cas("fenced-n", "1", 200, b.version);
    EXPECT_FALSE(moved.accepted) << "b read before a's write: its update would lose a's";
    EXPECT_FALSE(moved.stale_fence);
    b = c.fenced_get("fenced-n");
    EXPECT_EQ(*b.value, "1");
    EXPECT_TRUE(c.fenced_cas("fenced-n", "2", 200, b.version).accepted);
    // A write that bypasses deadbolt (etcdctl put) moves the version as well.
    auto before = c.fenced_get("fenced-n");
    ASSERT_EQ(etcd.etcdctl({"put", "fenced-n", "by-hand"}), 0);
    EXPECT_FALSE(c.fenced_cas("fenced-n", "3", 200, before.version).accepted);
    EXPECT_TRUE(c.fenced_cas("fenced-n", "3", 100, 0).stale_fence);
}

TEST(EtcdFenced, DataOnALeaseKeepsItAndTheFenceRecordGoesWithIt) {
    auto& etcd = EtcdCluster::shared();
    auto c = Client::connect(etcd.url());
    std::string out;
    ASSERT_EQ(etcd.etcdctl({"lease", "grant", "60"}, &out), 0);
    auto id = out.substr(out.find("lease ") + 6);
    id = id.substr(0, id.find(' '));
    ASSERT_EQ(etcd.etcdctl({"put", "--lease=" + id, "fenced-cache", "v0"}), 0);
    EXPECT_TRUE(c.fenced_set("fenced-cache", "v1", 5).accepted);
    ASSERT_EQ(etcd.etcdctl({"lease", "timetolive", "--keys", id}, &out), 0);
    EXPECT_NE(out.find("fenced-cache"), std::string::npos) << out;
    EXPECT_NE(out.find("fenced-cache:deadbolt-fence"), std::string::npos) << out;
    ASSERT_EQ(etcd.etcdctl({"lease", "revoke", id}), 0);
    EXPECT_FALSE(c.fenced_get("fenced-cache").value);
    EXPECT_TRUE(c.fenced_set("fenced-cache", "v2", 1).accepted) << "the record went too";
}

TEST(EtcdFenced, PutIfCurrentWritesOnlyWhileTheLockIsStillOurs) {
    auto& etcd = EtcdCluster::shared();
    auto c = Client::connect(etcd.url());
    auto held = c.acquire("guarded-res");
    EXPECT_TRUE(held.put_if_current("guarded-record", "v1"));
    std::string out;
    etcd.etcdctl({"get", "--print-value-only", "guarded-record"}, &out);
    EXPECT_EQ(out, "v1\n");
    // The lock is taken away behind the holder's back (an operator, an expired lease).
    ASSERT_EQ(etcd.etcdctl({"del", "--prefix", "guarded-res/"}), 0);
    EXPECT_FALSE(held.put_if_current("guarded-record", "late"));
    EXPECT_TRUE(held.lost()) << "a refused guarded write means the lock is gone";
    etcd.etcdctl({"get", "--print-value-only", "guarded-record"}, &out);
    EXPECT_EQ(out, "v1\n") << "the write of a holder that lost the lock must not land";
    // The next holder of the same name has a new key: the old holding still cannot write.
    auto next = c.acquire("guarded-res", {}, {.deadline = std::chrono::steady_clock::now() + 10s});
    std::error_code ec;
    EXPECT_FALSE(held.put_if_current("guarded-record", "later", ec));
    EXPECT_TRUE(next.put_if_current("guarded-record", "v2"));
    etcd.etcdctl({"get", "--print-value-only", "guarded-record"}, &out);
    EXPECT_EQ(out, "v2\n");
}

TEST(EtcdFenced, PutIfCurrentRefusesKeysThatWouldQueueAsContenders) {
    auto& etcd = EtcdCluster::shared();
    auto c = Client::connect(etcd.url());
    auto held = c.acquire("guarded-dir");
    EXPECT_THROW(held.put_if_current("guarded-dir/data", "x"), deadbolt::UsageError);
    EXPECT_THROW(held.put_if_current("", "x"), deadbolt::UsageError);
    std::string out;
    etcd.etcdctl({"get", "--prefix", "--keys-only", "guarded-dir/"}, &out);
    EXPECT_EQ(std::count(out.begin(), out.end(), '/'), 1) << "only the lock's own key: " << out;
    held.release();
    EXPECT_THROW(held.put_if_current("guarded-data", "x"), deadbolt::LockError);
}

TEST(EtcdFenced, PutIfCurrentOnAMultiLockNeedsEveryName) {
    auto& etcd = EtcdCluster::shared();
    auto c = Client::connect(etcd.url());
    auto all = c.acquire_all({"guarded-a", "guarded-b"}, {});
    EXPECT_TRUE(all.put_if_current("guarded-both", "1"));
    ASSERT_EQ(etcd.etcdctl({"del", "--prefix", "guarded-b/"}), 0);
    EXPECT_FALSE(all.put_if_current("guarded-both", "2")) << "one name is no longer held";
    std::string out;
    etcd.etcdctl({"get", "--print-value-only", "guarded-both"}, &out);
    EXPECT_EQ(out, "1\n");
}
