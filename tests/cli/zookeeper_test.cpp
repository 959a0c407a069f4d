// Issue 30 on ZooKeeper, as a user of the CLI sees it: a crashed holder keeps the lock for its
// TTL (item 3), a force-unlock stops the holder's command at once (item 2), status tells who
// holds and how the holding ends (item 5), a lock of a user is that user's (item 12), and
// errors speak deadbolt's words, naming what was tried (items 9 and 10).
#ifdef DEADBOLT_TEST_ZK
#include <signal.h>

#include <cstdio>
#include <fstream>
#include <future>
#include <thread>

#include "cli.hpp"
#include "deadbolt/deadbolt.hpp"
#include "redis_server.hpp"
#include "tcp_proxy.hpp"

namespace deadbolt::clitest {
namespace {

using namespace std::chrono_literals;

template <class E>
using ZkCli = EveryEngine<E>;
TYPED_TEST_SUITE(ZkCli, ::testing::Types<Zk>, BackendName);

// The number a command wrote into file (0 until it did).
int number_in(const std::string& file) {
    int n = 0;
    std::ifstream(file) >> n;
    return n;
}

// Item 3. The ensemble keeps a session up to 10 s (20 ticks of 500 ms): without a session per
// TTL, a crashed `run --ttl 2s` kept its lock that long, past the second run's 8 s wait.
TYPED_TEST(ZkCli, ACrashedRunKeepsTheLockForItsTtlNotForTheLongestSession) {
    auto name = own_name("crash");
    auto pids = ::testing::TempDir() + "/" + own_name("pids");
    std::remove(pids.c_str());
    // The command writes run's pid (its parent) and its own (its process group's).
    auto first = deadbolt_async(this->url(), {"run", "--ttl", "2s", name, "--", "sh", "-c",
                                              "echo $PPID $$ > " + pids + "; sleep 60"});
    until_held(this->url(), name);
    for (int i = 0; i < 500 && number_in(pids) == 0; ++i) std::this_thread::sleep_for(10ms);
    int run_pid = 0, command = 0;
    std::ifstream(pids) >> run_pid >> command;
    ASSERT_GT(run_pid, 0);
    ::kill(run_pid, SIGKILL);  // a crash: nothing is released
    ::kill(-command, SIGKILL);
    auto second = this->cli({"run", "--wait", "8s", name, "--", "true"});
    EXPECT_EQ(second.rc, 0) << "the lock outlived its 2 s TTL: " << second.out;
    (void)first.get();
}

TYPED_TEST(ZkCli, ATtlUnderTheEnsemblesShortestSessionIsRefusedNamingIt) {
    auto r = this->cli({"run", "--ttl", "500ms", own_name("short"), "--", "true"});
    EXPECT_EQ(r.rc, 64) << r.out;
    EXPECT_TRUE(says(r, {"500ms", "shortest session", "at least 1.0s"}));
}

// Item 2. The holder's requests are held back by a proxy, so no renewal of its own can tell
// it anything: only the watch on its node can, at once. Without it the command would run its
// 8 s and print "survived" before the holder's 10 s validity ran out.
TYPED_TEST(ZkCli, AForceUnlockStopsTheCommandAtOnceNotAtTheNextRenewal) {
    auto name = own_name("forced");
    test::TcpProxy proxy(this->engine.ensemble.client_port(0));
    auto via_proxy = "zk://127.0.0.1:" + std::to_string(proxy.port());
    auto first = deadbolt_async(
        via_proxy, {"run", "--ttl", "10s", name, "--", "sh", "-c", "sleep 8; echo survived"});
    until_held(this->url(), name);
    std::this_thread::sleep_for(300ms);  // the holder's watch, sent behind its grant, is set
    proxy.stall_requests(true);
    auto freed = this->cli({"force-unlock", name});
    EXPECT_EQ(freed.rc, 0) << freed.out;
    auto r = first.get();
    proxy.stall_requests(false);
    EXPECT_EQ(r.rc, 70) << r.out;
    EXPECT_TRUE(says(r, {"lost"}));
    EXPECT_EQ(r.out.find("survived"), std::string::npos) << "stopped only after its validity:\n"
                                                         << r.out;
}

// Item 5.
TYPED_TEST(ZkCli, StatusNamesTheHolderItsFenceAndThatItEndsWithItsSession) {
    auto name = own_name("status");
    auto holder = deadbolt_async(this->url(), {"run", "--ttl", "5s", name, "--", "sleep", "4"});
    until_held(this->url(), name);
    auto text = this->cli({"status", name});
    EXPECT_EQ(text.rc, 0) << text.out;
    EXPECT_TRUE(says(
        text, {"ends with its holder's session (timeout 5.0s)", "last fence", "held by", " pid "}));
    EXPECT_EQ(text.out.find("no expiry"), std::string::npos) << text.out;
    EXPECT_EQ(text.out.find("did not write"), std::string::npos) << text.out;
    auto json = this->cli({"status", "--json", name});
    EXPECT_TRUE(says(json, {"\"session_timeout_ms\":5000", "\"pid\":"}));
    auto listed = this->cli({"list", name});
    EXPECT_TRUE(says(listed, {"with session"}));
    auto held = holder.get();
    EXPECT_EQ(held.rc, 0) << held.out;  // what the holder said when it could not hold
}

TYPED_TEST(ZkCli, StatusNamesAKazooHolderAsKazoo) {
    auto name = own_name("kazoo");
    auto theirs = std::async(std::launch::async, [&] {
        std::string o;
        this->engine.ensemble.kazoo(R"(
import sys, time
from kazoo.client import KazooClient
zk = KazooClient(hosts=sys.argv[1]); zk.start()
lock = zk.Lock(sys.argv[2], "kazoo-worker")
lock.acquire(timeout=30)
print("held", flush=True)
time.sleep(3)
lock.release(); zk.stop()
)",
                                    {"/" + name}, &o);
        return o;
    });
    until_held(this->url(), name);
    auto r = this->cli({"status", name});
    EXPECT_TRUE(says(r, {"did not write (Kazoo)"}));
    EXPECT_EQ(theirs.get(), "held\n");
}

// Item 12.
TYPED_TEST(ZkCli, OnlyTheHoldersUserMayForceUnlockItsLock) {
    auto name = own_name("acl");
    // A session is a quorum write: on a loaded machine the ensemble may take longer than the
    // default 2 s to make one, which is not what this test is about.
    const std::string patient = "connect_timeout=15s";
    auto team = this->url() + "?user=cli-team&password=s3cret&" + patient;
    auto holder = deadbolt_async(team, {"run", name, "--", "sleep", "30"});
    until_held(this->url(), name);
    auto anonymous = deadbolt(this->url() + "?" + patient, {"force-unlock", name});
    EXPECT_EQ(anonymous.rc, 69) << anonymous.out;
    EXPECT_TRUE(says(anonymous, {"ACL"}));
    auto intruder =
        deadbolt(this->url() + "?user=intruder&password=pw&" + patient, {"force-unlock", name});
    EXPECT_EQ(intruder.rc, 69) << intruder.out;
    auto colleague = deadbolt(team, {"force-unlock", name});
    EXPECT_EQ(colleague.rc, 0) << colleague.out;
    EXPECT_EQ(holder.get().rc, 70);
}

// Items 9 and 10.
TYPED_TEST(ZkCli, ARefusedPortIsNamedAtOnceInDeadboltsWords) {
    auto port = std::to_string(test::free_port());  // nothing listens there
    auto r = deadbolt("zk://127.0.0.1:" + port, {"status", "x"});
    EXPECT_EQ(r.rc, 69) << r.out;
    EXPECT_TRUE(says(r, {("127.0.0.1:" + port + ": connection refused").c_str()}));
    EXPECT_EQ(r.out.find("ZOO_"), std::string::npos) << "the C client's log line leaked:\n"
                                                     << r.out;
}

TYPED_TEST(ZkCli, AZkUrlAtARedisPortIsNamedAsMakingNoSession) {
    test::RedisServer srv;
    auto at = "127.0.0.1:" + std::to_string(srv.port());
    auto r = deadbolt("zk://" + at + "?connect_timeout=1s", {"status", "x"});
    EXPECT_EQ(r.rc, 69) << r.out;
    EXPECT_TRUE(says(r, {(at + " took a TCP connection but made no session").c_str()}));
    EXPECT_EQ(r.out.find("ZOO_"), std::string::npos) << r.out;
}

TYPED_TEST(ZkCli, ThrottleIsRefusedNamingTheEnginesThatOfferIt) {
    auto r = this->cli({"throttle", "--window", "1s", own_name("t")});
    EXPECT_EQ(r.rc, 64) << r.out;
    EXPECT_TRUE(says(r, {"Redis", "PostgreSQL", "MariaDB"}));
    EXPECT_EQ(r.out.find("etcd"), std::string::npos) << "etcd offers no RateLimiter:\n" << r.out;
}

}  // namespace
}  // namespace deadbolt::clitest
#endif
