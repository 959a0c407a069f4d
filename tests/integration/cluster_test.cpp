// Redis Cluster: 3 masters and 3 replicas started by the fixture. Locks land on the master
// of their slot, follow MOVED and ASK while a slot migrates, and a lease that a promoted
// replica does not hold is reported lost.
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>

#include "deadbolt/deadbolt.hpp"
#include "eventually.hpp"
#include "redis_cluster.hpp"

using namespace std::chrono_literals;
using deadbolt::errc;
using deadbolt::make_error_code;
using deadbolt::test::eventually;
using deadbolt::test::RedisCluster;
using Clock = std::chrono::steady_clock;

namespace {

// One cluster for the tests that do not kill or reshard it.
RedisCluster& shared_cluster() {
    static RedisCluster c;
    return c;
}

// Names whose slots are served by each master in turn, so a test touches all of them.
std::vector<std::string> names_on_every_master(RedisCluster& c, const std::string& stem, int per) {
    std::map<std::size_t, int> count;
    std::vector<std::string> out;
    for (int i = 0; out.size() < 3 * static_cast<std::size_t>(per); ++i) {
        auto name = stem + std::to_string(i);
        if (count[c.master_of(name)]++ < per) out.push_back(name);
    }
    return out;
}

}  // namespace

TEST(Cluster, LocksLandOnTheMasterOfTheirSlot) {
    auto& c = shared_cluster();
    auto client = deadbolt::Client::connect(c.url());
    auto names = names_on_every_master(c, "spread-", 4);
    std::vector<deadbolt::Lease> leases;
    std::set<std::size_t> masters;
    for (auto& n : names) {
        leases.push_back(client.acquire(n));
        auto m = c.master_of(n);
        masters.insert(m);
        EXPECT_EQ(c.node(m).raw().cmd({"GET", n}).str, leases.back().token()) << n;
        EXPECT_GT(leases.back().fence(), 0u);
    }
    EXPECT_EQ(masters.size(), 3u);
    // Renewed on every master (one pipeline per master), checked, and released everywhere.
    for (auto& l : leases) {
        l.extend(20s);
        EXPECT_TRUE(l.is_current());
    }
    for (auto& l : leases) l.release();
    for (auto& n : names) EXPECT_EQ(c.node(c.master_of(n)).raw().cmd({"EXISTS", n}).integer, 0);
    // Fences still rise per name.
    auto again = client.acquire(names.front());
    EXPECT_GT(again.fence(), leases.front().fence());
}
