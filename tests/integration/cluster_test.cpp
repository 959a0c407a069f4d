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

TEST(Cluster, ALockStaysHeldAndReleasableWhileItsSlotMigrates) {
    RedisCluster c;
    auto client = deadbolt::Client::connect(c.url());
    auto rival = deadbolt::Client::connect(c.url());
    const std::string name = "migrating";
    auto slot = c.slot(name);
    auto from = c.master_of(name);
    auto to = c.masters().front() == from ? c.masters()[1] : c.masters().front();
    auto lease = client.acquire(name);
    auto first_fence = lease.fence();
    std::error_code ec;

    c.migrate_begin(slot, from, to);  // keys still on `from`: served there
    lease.extend(20s);
    EXPECT_TRUE(lease.is_current());
    EXPECT_FALSE(rival.mutex(name).try_lock(ec));  // held: refused, and no error
    EXPECT_FALSE(ec) << ec.message();

    c.migrate_keys(slot, from, to);  // `from` answers ASK: the keys are on `to` now
    ASSERT_EQ(c.node(from).raw().cmd({"EXISTS", name}).integer, 0);
    EXPECT_TRUE(lease.is_current());
    lease.extend(20s);
    EXPECT_FALSE(rival.mutex(name).try_lock(ec));  // held: refused, and no error
    EXPECT_FALSE(ec) << ec.message();

    c.migrate_end(slot, to);  // `from` answers MOVED
    EXPECT_TRUE(lease.is_current());
    lease.extend(20s);
    EXPECT_FALSE(rival.mutex(name).try_lock(ec));
    EXPECT_FALSE(ec) << ec.message();
    lease.release();
    EXPECT_EQ(c.node(to).raw().cmd({"EXISTS", name}).integer, 0);

    // The rival, whose map still names `from`, follows MOVED; fences keep rising.
    auto next = rival.acquire(name);
    EXPECT_EQ(c.node(to).raw().cmd({"GET", name}).str, next.token());
    EXPECT_GT(next.fence(), first_fence);
}

TEST(Cluster, AMasterKilledMidHoldReportsLostWhatItsReplicaLacks) {
    RedisCluster c;
    // The first node in the URL carries the client's release messages: kill that one.
    std::size_t m = 0;
    ASSERT_EQ(c.masters().front(), 0u) << "redis-cli made node 0 a replica";
    auto r = c.replica_of(m);
    auto client = deadbolt::Client::connect(c.url());
    auto waiter_client = deadbolt::Client::connect(c.url());
    std::string kept, lost;
    for (int i = 0; kept.empty() || lost.empty(); ++i) {
        auto n = "failover-" + std::to_string(i);
        if (c.master_of(n) != m) continue;
        (kept.empty() ? kept : lost) = n;
    }
    std::atomic<int> lost_count{0}, kept_lost{0};
    deadbolt::MutexOptions o;
    o.ttl = 30s;  // no renewal before the failover: only the failover check can tell
    o.on_lost = [&](std::string_view name, std::error_code ec) {
        if (name == lost && ec == make_error_code(errc::not_owner)) ++lost_count;
        if (name == kept) ++kept_lost;
    };
    auto held = client.acquire(kept, o);
    ASSERT_EQ(c.node(m).raw().cmd({"WAIT", "1", "5000"}).integer, 1);  // the replica has it
    // A waiter for `kept`, subscribed through node 0 (the URL's first).
    std::atomic<bool> got{false};
    Clock::time_point got_at{};
    std::string waiter_errors;  // retryable ones, met while the cluster failed over
    std::thread waiter([&] {
        deadbolt::AcquireOptions how;
        how.deadline = Clock::now() + 60s;
        for (;;) {
            std::error_code ec;
            auto l = waiter_client.acquire(kept, {}, how, ec);
            if (ec && deadbolt::is_retryable(ec) && ec != make_error_code(errc::not_acquired)) {
                waiter_errors += ec.message() + "; ";
                continue;
            }
            got_at = Clock::now();
            got = static_cast<bool>(l);
            if (ec) waiter_errors += "final: " + ec.message();
            return;
        }
    });
    std::this_thread::sleep_for(300ms);

    // Replication stops here: the replica is frozen and the master drops its link (bytes
    // already in the link's socket buffers would still reach it), so the next lock exists on
    // the master only.
    c.node(r).pause();
    c.node(m).raw().cmd({"CLIENT", "KILL", "TYPE", "replica"});
    auto doomed = client.acquire(lost, o);
    c.node(m).stop();
    c.alive[m] = false;
    c.node(r).resume();
    ASSERT_TRUE(c.wait_ok(30s, c.slot(lost), static_cast<int>(r))) << "no failover";

    // The promoted replica lacks `lost`: reported lost (not_owner) without waiting for a
    // renewal; `kept` is there and stays held.
    EXPECT_TRUE(eventually([&] { return doomed.stop_token().stop_requested(); }, 15s));
    EXPECT_EQ(lost_count.load(), 1);
    EXPECT_TRUE(eventually([&] {
        std::error_code ec;
        return held.is_current(ec) && !ec;
    }));
    held.extend(30s);
    EXPECT_EQ(kept_lost.load(), 0);
    EXPECT_EQ(c.node(r).raw().cmd({"GET", kept}).str, held.token());

    // The lost name is free on the new master, with a fence above the lost one.
    auto retaken = client.acquire(lost);
    EXPECT_EQ(c.node(r).raw().cmd({"GET", lost}).str, retaken.token());
    EXPECT_GT(retaken.fence(), doomed.fence());

    // The waiter's release messages now come through another node: it wakes on the release,
    // not on the 30 s expiry.
    EXPECT_FALSE(got.load());
    auto released_at = Clock::now();
    held.release();
    waiter.join();
    EXPECT_TRUE(got.load()) << waiter_errors;
    EXPECT_LT(got_at - released_at, 10s);
}
