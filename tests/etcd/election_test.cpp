// LeaderElection on etcd shares etcd's concurrency.Election layout: `etcdctl elect` campaigns
// in the same election as deadbolt, and `etcdctl elect -l` observes deadbolt's leader.
#include <gtest/gtest.h>

#include <future>

#include "deadbolt/deadbolt.hpp"
#include "etcd_cluster.hpp"
#include "eventually.hpp"

using namespace std::chrono_literals;
using deadbolt::Client;
using deadbolt::test::EtcdCluster;
using deadbolt::test::eventually;
using Clock = std::chrono::steady_clock;

TEST(EtcdElection, EtcdctlObservesDeadboltsLeaderAndItsProclamations) {
    EtcdCluster etcd(1);
    auto c = Client::connect("etcd://" + etcd.endpoints());
    auto e = c.election("svc");
    e.campaign("10.0.0.1:80");
    std::string out;
    etcd.etcdctl({"elect", "-l", "svc"}, &out, 2s);  // prints the leader, then every change
    EXPECT_NE(out.find("svc/"), std::string::npos) << out;
    EXPECT_NE(out.find("10.0.0.1:80"), std::string::npos) << out;
    e.proclaim("10.0.0.1:81");
    etcd.etcdctl({"elect", "-l", "svc"}, &out, 2s);
    EXPECT_NE(out.find("10.0.0.1:81"), std::string::npos) << out;
}

TEST(EtcdElection, DeadboltWaitsBehindAnEtcdctlLeaderAndLeadsWhenItResigns) {
    EtcdCluster etcd(1);
    auto c = Client::connect("etcd://" + etcd.endpoints());
    auto theirs = std::async(std::launch::async, [&] {
        std::string out;
        // Resigns on SIGTERM, after 5 s: long enough to lead first on a loaded machine.
        etcd.etcdctl({"elect", "svc", "etcdctl-candidate"}, &out, 5s);
        return out;
    });
    auto e = c.election("svc");
    ASSERT_TRUE(eventually([&] { return e.leader().value == "etcdctl-candidate"; }, 5s));
    EXPECT_THROW(e.campaign("deadbolt", {.deadline = Clock::now()}), deadbolt::LockError);
    auto term = e.leader().term;
    auto deadline = Clock::now() + 20s;
    e.campaign("deadbolt", {.deadline = deadline});
    EXPECT_LT(Clock::now(), deadline);
    EXPECT_NE(theirs.get().find("etcdctl-candidate"), std::string::npos);
    EXPECT_EQ(e.leader().value, "deadbolt");
    EXPECT_GT(e.leader().term, term);
}
