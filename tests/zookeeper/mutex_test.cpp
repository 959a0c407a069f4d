// deadbolt's Mutex on a real ZooKeeper ensemble: Curator's layout, shared with Kazoo both
// ways, waiting on the one node ahead, and bad input named.
#include <gtest/gtest.h>

#include <future>
#include <stop_token>
#include <thread>

#include "deadbolt/deadbolt.hpp"
#include "eventually.hpp"
#include "redis_server.hpp"  // run_command
#include "zk_ensemble.hpp"
#include "znodes.hpp"

using namespace std::chrono_literals;
using deadbolt::Client;
using deadbolt::test::children;
using deadbolt::test::delete_node;
using deadbolt::test::eventually;
using deadbolt::test::packets;
using deadbolt::test::queued;
using deadbolt::test::ZkEnsemble;
using Clock = std::chrono::steady_clock;

namespace {

// Takes Kazoo's Lock on argv[2] (counting Curator's contenders), prints "held", holds it for
// argv[3] seconds, releases.
constexpr const char* kKazooHolds = R"(
import sys, time
from kazoo.client import KazooClient
zk = KazooClient(hosts=sys.argv[1]); zk.start()
lock = zk.Lock(sys.argv[2], extra_lock_patterns=["-lock-"])
lock.acquire(timeout=30)
print("held", flush=True)
time.sleep(float(sys.argv[3]))
lock.release(); zk.stop()
)";

// Tries Kazoo's Lock (or argv[4]: ReadLock, WriteLock) on argv[2] for argv[3] seconds,
// counting Curator's contenders: prints "got" or "busy".
constexpr const char* kKazooTries = R"(
import sys
from kazoo.client import KazooClient
from kazoo.exceptions import LockTimeout
zk = KazooClient(hosts=sys.argv[1]); zk.start()
kind = sys.argv[4] if len(sys.argv) > 4 else "Lock"
patterns = {"Lock": ["-lock-", "__WRIT__", "__READ__"], "WriteLock": ["-lock-", "__WRIT__", "__READ__"],
            "ReadLock": ["-lock-", "__WRIT__"]}[kind]
lock = getattr(zk, kind)(sys.argv[2], extra_lock_patterns=patterns)
try:
    print("got" if lock.acquire(timeout=float(sys.argv[3])) else "busy", flush=True)
except LockTimeout:
    print("busy", flush=True)
if lock.is_acquired: lock.release()
zk.stop()
)";

}  // namespace

TEST(ZkMutex, ExcludesFencesRiseAndTheNodeIsCuratorsLayout) {
    auto& zk = ZkEnsemble::shared();
    auto a = Client::connect(zk.url()), b = Client::connect(zk.url());
    auto held = a.acquire("zk-basic");
    auto kids = children(zk, "/zk-basic");
    ASSERT_EQ(kids.size(), 1u);
    // _c_<36-char guid>-lock-<10-digit sequence>, as Curator's InterProcessMutex names it.
    EXPECT_TRUE(kids[0].starts_with("_c_")) << kids[0];
    EXPECT_EQ(kids[0].find("-lock-"), 3u + 36u) << kids[0];
    EXPECT_EQ(kids[0].size(), 3u + 36u + 6u + 10u) << kids[0];
    EXPECT_THROW(b.acquire("zk-basic", {}, {.deadline = Clock::now()}), deadbolt::LockError);
    EXPECT_EQ(children(zk, "/zk-basic").size(), 1u) << "a waiter that gave up leaves nothing";
    auto first = held.fence();
    held.release();
    auto next = b.acquire("zk-basic", {}, {.deadline = Clock::now() + 5s});
    EXPECT_GT(next.fence(), first);
    EXPECT_TRUE(next.is_current());
}

TEST(ZkMutex, AWaiterIsWokenByTheReleaseOfTheNodeAhead) {
    auto& zk = ZkEnsemble::shared();
    auto a = Client::connect(zk.url()), b = Client::connect(zk.url());
    auto held = a.acquire("zk-wake");
    std::thread releaser([&] {
        std::this_thread::sleep_for(300ms);
        held.release();
    });
    auto deadline = Clock::now() + 20s;
    auto got = b.acquire("zk-wake", {}, {.deadline = deadline});
    EXPECT_LT(Clock::now(), deadline);
    releaser.join();
    EXPECT_TRUE(got.valid());
}

TEST(ZkMutex, AWaiterWhoseNeighbourAheadGivesUpWatchesTheNextOneInsteadOfPolling) {
    auto& zk = ZkEnsemble::shared();
    auto a = Client::connect(zk.url()), b = Client::connect(zk.url()),
         c = Client::connect(zk.url());
    auto held = a.acquire("zk-follow");
    // The quitter gives up when told, not at a deadline: a loaded machine may take long to
    // queue the next waiter behind it.
    std::stop_source give_up;
    auto quitter = std::async(std::launch::async, [&] {
        EXPECT_THROW(b.acquire("zk-follow", {},
                               {.deadline = Clock::now() + 60s, .cancel = give_up.get_token()}),
                     deadbolt::LockError);
    });
    ASSERT_TRUE(queued(zk, "/zk-follow", 2));
    auto waiter = std::async(std::launch::async, [&] {
        return c.acquire("zk-follow", {}, {.deadline = Clock::now() + 60s});
    });
    ASSERT_TRUE(queued(zk, "/zk-follow", 3));
    give_up.request_stop();
    quitter.get();  // c's watch fired: it must now watch a's node
    ASSERT_TRUE(queued(zk, "/zk-follow", 2));
    auto before = packets(zk);
    std::this_thread::sleep_for(2s);
    // Pings and a look or two; a waiter that looked again and again would send thousands.
    EXPECT_LT(packets(zk) - before, 100);
    EXPECT_EQ(waiter.wait_for(0s), std::future_status::timeout) << "a still holds";
    held.release();
    EXPECT_TRUE(waiter.get().valid());
}

TEST(ZkInterop, KazooWaitsForADeadboltHolderAndGetsItOnRelease) {
    auto& zk = ZkEnsemble::shared();
    auto c = Client::connect(zk.url());
    auto held = c.acquire("interop-kazoo-1");
    std::string out;
    zk.kazoo(kKazooTries, {"/interop-kazoo-1", "0.5"}, &out);
    EXPECT_EQ(out, "busy\n") << "Kazoo must see our Curator-style node as a contender";
    auto theirs = std::async(std::launch::async, [&] {
        std::string o;
        zk.kazoo(kKazooTries, {"/interop-kazoo-1", "20"}, &o);
        return o;
    });
    ASSERT_TRUE(queued(zk, "/interop-kazoo-1", 2));
    EXPECT_EQ(theirs.wait_for(300ms), std::future_status::timeout);
    held.release();
    EXPECT_EQ(theirs.get(), "got\n");
}

TEST(ZkInterop, ADeadboltWaiterQueuesBehindKazooAndIsWokenByItsRelease) {
    auto& zk = ZkEnsemble::shared();
    auto c = Client::connect(zk.url());
    auto theirs = std::async(std::launch::async, [&] {
        std::string o;
        zk.kazoo(kKazooHolds, {"/interop-kazoo-2", "1"}, &o);
        return o;
    });
    ASSERT_TRUE(eventually([&] { return c.status("interop-kazoo-2").held; }, 30s));
    EXPECT_THROW(c.acquire("interop-kazoo-2", {}, {.deadline = Clock::now()}), deadbolt::LockError);
    auto got = c.acquire("interop-kazoo-2", {}, {.deadline = Clock::now() + 20s});
    EXPECT_EQ(theirs.get(), "held\n");
    auto kids = children(zk, "/interop-kazoo-2");
    ASSERT_EQ(kids.size(), 1u);
    EXPECT_TRUE(kids[0].starts_with("_c_")) << "Kazoo's node went; ours holds";
}

TEST(ZkInterop, DeadboltAndKazooReadersShareAndKazoosWriterWaitsForBoth) {
    auto& zk = ZkEnsemble::shared();
    auto c = Client::connect(zk.url());
    auto reader = c.acquire("interop-rw", deadbolt::LockMode::shared, {});
    std::string out;
    zk.kazoo(kKazooTries, {"/interop-rw", "5", "ReadLock"}, &out);
    EXPECT_EQ(out, "got\n") << "a Kazoo reader shares with ours";
    zk.kazoo(kKazooTries, {"/interop-rw", "0.5", "WriteLock"}, &out);
    EXPECT_EQ(out, "busy\n") << "a Kazoo writer waits for our reader";
    auto theirs = std::async(std::launch::async, [&] {
        std::string o;
        zk.kazoo(kKazooTries, {"/interop-rw", "20", "WriteLock"}, &o);
        return o;
    });
    ASSERT_TRUE(queued(zk, "/interop-rw", 2));
    EXPECT_TRUE(c.status("interop-rw").writer_waiting);
    EXPECT_THROW(
        c.acquire("interop-rw", deadbolt::LockMode::shared, {}, {.deadline = Clock::now()}),
        deadbolt::LockError)
        << "a new reader queues behind the waiting writer";
    reader.release();
    EXPECT_EQ(theirs.get(), "got\n");
}

TEST(ZkInterop, DeadboltSeesAKazooLeaderAndCampaignsBehindIt) {
    auto& zk = ZkEnsemble::shared();
    auto c = Client::connect(zk.url());
    auto theirs = std::async(std::launch::async, [&] {
        std::string o;
        zk.kazoo(R"(
import sys, time
from kazoo.client import KazooClient
zk = KazooClient(hosts=sys.argv[1]); zk.start()
def lead():
    print("leading", flush=True); time.sleep(1.5)
zk.Election(sys.argv[2], "kazoo-candidate").run(lead)
zk.stop()
)",
                 {"/interop-elect"}, &o);
        return o;
    });
    auto e = c.election("interop-elect");
    ASSERT_TRUE(eventually([&] { return e.leader().value == "kazoo-candidate"; }, 30s));
    auto term = e.leader().term;
    EXPECT_THROW(e.campaign("deadbolt", {.deadline = Clock::now()}), deadbolt::LockError);
    e.campaign("deadbolt", {.deadline = Clock::now() + 20s});
    EXPECT_EQ(theirs.get(), "leading\n");
    EXPECT_EQ(e.leader().value, "deadbolt");
    EXPECT_GT(e.leader().term, term);
}

TEST(ZkSession, AHolderWhoseNodeIsDeletedFromOutsideIsToldItLost) {
    auto& zk = ZkEnsemble::shared();
    auto c = Client::connect(zk.url("?session_timeout=2s"));
    auto held = c.acquire("zk-deleted");  // the 30 s ttl is cut to the session's 2 s
    EXPECT_LE(held.valid_until() - Clock::now(), 2s);
    auto kids = children(zk, "/zk-deleted");
    ASSERT_EQ(kids.size(), 1u);
    delete_node(zk, "/zk-deleted/" + kids[0]);
    EXPECT_TRUE(eventually([&] { return held.stop_token().stop_requested(); }, 10s));
    EXPECT_TRUE(held.lost());
}

TEST(ZkAdmin, ListFindsLocksAndForceUnlockFreesOneAndWakesItsWaiter) {
    auto& zk = ZkEnsemble::shared();
    auto a = Client::connect(zk.url()), b = Client::connect(zk.url());
    auto one = a.acquire("admin/one");
    auto two = a.acquire("admin/two", deadbolt::LockMode::shared, {});
    std::vector<std::string> names;
    for (const auto& l : a.list("admin/*")) names.push_back(l.name);
    EXPECT_EQ(names, (std::vector<std::string>{"admin/one", "admin/two"}));
    auto waiter = std::async(std::launch::async, [&] {
        return b.acquire("admin/one", {}, {.deadline = Clock::now() + 20s});
    });
    ASSERT_TRUE(queued(zk, "/admin/one", 2));
    EXPECT_EQ(a.force_unlock("admin/one"), "mutex");
    auto got = waiter.get();  // the waiter queued again and holds
    EXPECT_TRUE(got.valid());
    EXPECT_TRUE(eventually([&] { return one.lost(); }, 10s)) << "the holder is told";
}

TEST(ZkBadInput, EachMistakeIsNamed) {
    auto& zk = ZkEnsemble::shared();
    try {
        Client::connect(zk.url("/no/such/chroot"));
        ADD_FAILURE() << "a missing chroot must be refused";
    } catch (const deadbolt::UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
    }
    try {
        deadbolt::ClientOptions o;
        o.connect_timeout = 500ms;
        Client::connect("zk://127.0.0.1:1", o);
        ADD_FAILURE() << "a dead ensemble must be refused";
    } catch (const deadbolt::ConnectionError& e) {
        // Named with the reason, in deadbolt's words, not the C client's log line.
        EXPECT_NE(std::string(e.what()).find("127.0.0.1:1: connection refused"), std::string::npos)
            << e.what();
        EXPECT_EQ(std::string(e.what()).find("ZOO_"), std::string::npos) << e.what();
    }
    EXPECT_THROW(Client::connect("zk://h?bogus=1"), deadbolt::UsageError);
    auto c = Client::connect(zk.url());
    EXPECT_THROW(c.acquire("a//b"), deadbolt::UsageError);
    EXPECT_THROW(c.acquire("/lead"), deadbolt::UsageError);
    EXPECT_THROW(c.acquire("x", {.auto_renew = false}), deadbolt::UsageError);
    try {
        (void)c.rate_limiter("r", {.rate = 10, .per = 1s});
        ADD_FAILURE() << "a RateLimiter is refused on ZooKeeper";
    } catch (const deadbolt::UsageError& e) {  // saying what is built instead, and where it is
        EXPECT_NE(std::string(e.what()).find("Semaphore"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("PostgreSQL"), std::string::npos) << e.what();
        EXPECT_EQ(std::string(e.what()).find("etcd"), std::string::npos) << e.what();
    }
    // A name ZooKeeper would refuse is escaped, not refused: binary bytes and '.' parts.
    auto odd =
        c.acquire(std::string("bin\x01"
                              "ary/./%"));
    EXPECT_TRUE(odd.valid());
    EXPECT_EQ(children(zk, "/bin%01ary/%2E/%25").size(), 1u);
}

TEST(ZkBadInput, AWrongPasswordIsRefusedByTheNodesAclAndSaysSoAndTheRightOneGetsIn) {
    auto& zk = ZkEnsemble::shared();
    ASSERT_EQ(zk.kazoo(R"(
import sys
from kazoo.client import KazooClient
from kazoo.security import make_digest_acl
zk = KazooClient(hosts=sys.argv[1], auth_data=[("digest", "alice:secret")]); zk.start()
zk.create("/acl-locked", b"", acl=[make_digest_acl("alice", "secret", all=True)])
zk.stop()
)",
                       {}),
              0);
    // ZooKeeper takes any digest at connect: the refusal comes from the node's ACL.
    auto wrong = Client::connect(zk.url("?user=alice&password=wrong"));
    try {
        (void)wrong.acquire("acl-locked", {}, {.deadline = Clock::now() + 5s});
        ADD_FAILURE() << "the ACL must refuse a wrong password";
    } catch (const deadbolt::Error& e) {
        EXPECT_EQ(e.code(), make_error_code(deadbolt::errc::permission_denied)) << e.what();
        EXPECT_NE(std::string(e.what()).find("ACL"), std::string::npos) << e.what();
    }
    auto right = Client::connect(zk.url("?user=alice&password=secret"));
    auto held = right.acquire("acl-locked", {}, {.deadline = Clock::now() + 5s});
    EXPECT_TRUE(held.valid()) << held.lost();
}

#ifdef DEADBOLT_CLI
TEST(ZkCli, RunsItsCommandUnderTheLockAndHandsItNoneOfTheClientsDescriptors) {
    auto& zk = ZkEnsemble::shared();
    // The same descriptors as a command started without deadbolt: the C client's socket and
    // wake-up pipe are not the command's to keep (a session would outlive a dead deadbolt).
    // `ls` lists its own descriptors, with no shell whose pipeline would add its own.
    std::string without, with;
    deadbolt::test::run_command({"ls", "/proc/self/fd"}, &without);
    EXPECT_EQ(
        deadbolt::test::run_command(
            {DEADBOLT_CLI, "run", "--url", zk.url(), "zk-cli", "--", "ls", "/proc/self/fd"}, &with),
        0)
        << with;
    EXPECT_EQ(with, without) << "a descriptor of deadbolt's leaked into the command";
    EXPECT_TRUE(children(zk, "/zk-cli").empty()) << "run released when its command ended";
}
#endif
