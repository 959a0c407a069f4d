// Issue 30 item 5: status and list tell the truth on ZooKeeper. A deadbolt holder is named by
// host and process, with its fence and how its holding ends (with its session, after that
// session's timeout of silence); a holder of another tool is named as that tool.
#include <gtest/gtest.h>
#include <unistd.h>

#include <future>
#include <string>

#include "deadbolt/deadbolt.hpp"
#include "eventually.hpp"
#include "zk_ensemble.hpp"

using namespace std::chrono_literals;
using deadbolt::Client;
using deadbolt::test::eventually;
using deadbolt::test::ZkEnsemble;

TEST(ZkStatus, ADeadboltHolderIsNamedWithItsFenceAndItsSessionsTimeout) {
    auto& zk = ZkEnsemble::shared();
    auto c = Client::connect(zk.url());
    auto held = c.acquire("status-ours", {.ttl = 3s});
    auto other = Client::connect(zk.url());  // any client sees it so
    auto st = other.status("status-ours");
    EXPECT_TRUE(st.held);
    EXPECT_EQ(st.kind, "mutex");
    EXPECT_EQ(st.last_fence, held.fence());
    EXPECT_EQ(st.session_timeout, 3s) << "it ends with its session, after 3 s of silence";
    EXPECT_EQ(st.ttl.count(), -1) << "how much of that is left, nobody can tell";
    ASSERT_EQ(st.held_by.size(), 1u);
    EXPECT_EQ(st.held_by[0].pid, ::getpid());
    EXPECT_FALSE(st.held_by[0].host.empty());
    EXPECT_TRUE(st.held_by[0].client.empty()) << st.held_by[0].client;
    auto listed = other.list("status-ours");
    ASSERT_EQ(listed.size(), 1u);
    EXPECT_EQ(listed[0].status.session_timeout, 3s);
}

TEST(ZkStatus, ASemaphoresPermitsAreNamedWithTheirSessionsTimeout) {
    auto& zk = ZkEnsemble::shared();
    auto c = Client::connect(zk.url());
    // A session of 6 s, not 2: under the sanitizers' load beside three JVMs a 2 s session lost
    // its connection while creating the permit's node.
    auto sem = c.permit_semaphore("status-sem", 2, {.ttl = 6s});
    auto permit = sem.acquire();
    auto st = c.status("status-sem");
    EXPECT_EQ(st.kind, "semaphore");
    EXPECT_EQ(st.session_timeout, 6s);
    ASSERT_EQ(st.held_by.size(), 1u);
    EXPECT_EQ(st.held_by[0].pid, ::getpid());
    // The permit's id is still found in its node (it carries the session's timeout too).
    EXPECT_TRUE(sem.release(permit.token()));
}

TEST(ZkStatus, AKazooHolderIsNamedAsKazooWithNoTimeoutItCannotKnow) {
    auto& zk = ZkEnsemble::shared();
    auto c = Client::connect(zk.url());
    auto theirs = std::async(std::launch::async, [&] {
        std::string o;
        zk.kazoo(R"(
import sys, time
from kazoo.client import KazooClient
zk = KazooClient(hosts=sys.argv[1]); zk.start()
lock = zk.Lock(sys.argv[2], "kazoo-worker")
lock.acquire(timeout=30)
print("held", flush=True)
time.sleep(3)
lock.release(); zk.stop()
)",
                 {"/status-kazoo"}, &o);
        return o;
    });
    ASSERT_TRUE(eventually([&] { return c.status("status-kazoo").held; }, 30s));
    auto st = c.status("status-kazoo");
    ASSERT_EQ(st.held_by.size(), 1u);
    EXPECT_EQ(st.held_by[0].client, "Kazoo");
    EXPECT_TRUE(st.held_by[0].host.empty());
    EXPECT_EQ(st.session_timeout.count(), 0) << "Kazoo writes no session timeout";
    EXPECT_GT(st.last_fence, 0u);
    EXPECT_EQ(theirs.get(), "held\n");
}
