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
    // Listed from every master, in name order.
    std::vector<std::string> listed;
    for (const auto& l : client.list("spread-*")) listed.push_back(l.name);
    std::set<std::string> sorted(names.begin(), names.end());
    EXPECT_EQ(listed, std::vector<std::string>(sorted.begin(), sorted.end()));
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
            // Past the deadline a retryable error ends the wait too: the loop must not spin.
            if (ec && deadbolt::is_retryable(ec) && ec != make_error_code(errc::not_acquired) &&
                Clock::now() < *how.deadline) {
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
    // on_lost runs right after the stop request, on the renewer's thread.
    EXPECT_TRUE(eventually([&] { return lost_count.load() == 1; }, 5s)) << lost_count.load();
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

TEST(Cluster, EveryPrimitiveWorksOnNamesSpreadOverTheMasters) {
    auto& c = shared_cluster();
    auto client = deadbolt::Client::connect(c.url());
    auto other = deadbolt::Client::connect(c.url());
    auto names = names_on_every_master(c, "prim-", 3);  // 3 names per master
    std::size_t next = 0;
    auto name = [&] { return names[next++]; };

    auto sem = client.semaphore(name(), 2);
    EXPECT_TRUE(sem.try_acquire());
    EXPECT_TRUE(sem.try_acquire());
    EXPECT_FALSE(other.semaphore(sem.name(), 2).try_acquire());
    sem.release();
    EXPECT_EQ(sem.available(), 1);

    auto rw = client.rwlock(name());
    rw.lock_shared();
    auto rw2 = other.rwlock(rw.name());
    EXPECT_TRUE(rw2.try_lock_shared());
    EXPECT_FALSE(rw2.try_lock());  // readers hold it
    rw2.unlock_shared();
    rw.unlock_shared();
    EXPECT_TRUE(rw2.try_lock());
    rw2.unlock();

    auto re = client.reentrant_mutex(name());
    re.lock();
    re.lock();
    EXPECT_FALSE(other.reentrant_mutex(std::string(re.name())).try_lock());
    re.unlock();
    re.unlock();

    auto fair_name = name();
    auto fair = client.fair_mutex(fair_name);
    fair.lock();
    EXPECT_FALSE(other.fair_mutex(fair_name).try_lock());
    fair.unlock();
    EXPECT_TRUE(other.fair_mutex(fair_name).try_lock());

    auto latch = client.latch(name());
    EXPECT_TRUE(latch.try_set_count(2));
    std::atomic<bool> opened{false};
    std::thread waiter([&] { opened = other.latch(latch.name()).wait_for(20s); });
    latch.count_down();
    EXPECT_EQ(latch.count(), 1);
    latch.count_down();
    waiter.join();
    EXPECT_TRUE(opened.load());

    auto limiter = client.rate_limiter(name(), {1, 60s, 2});
    EXPECT_TRUE(limiter.try_acquire(2).allowed);
    EXPECT_FALSE(other.rate_limiter(limiter.name(), {1, 60s, 2}).try_acquire().allowed);

    auto election_name = name();
    auto election = client.election(election_name);
    election.campaign("node-a");
    EXPECT_EQ(other.election(election_name).leader().value, "node-a");
    election.resign();

    // Fencing enforced on a data key in another slot than the lock.
    auto lock_name = name();
    auto data_key = name();
    auto older = client.acquire(lock_name);
    older.release();
    auto newer = client.acquire(lock_name);
    EXPECT_TRUE(client.fenced_set(data_key, "new", newer.fence()).accepted);
    EXPECT_FALSE(client.fenced_set(data_key, "old", older.fence()).accepted);
    EXPECT_EQ(client.status(lock_name).held, true);
    EXPECT_EQ(client.status(lock_name).last_fence, newer.fence());
}

TEST(Cluster, AWaiterIsWokenByAReleaseOnAnotherMaster) {
    auto& c = shared_cluster();
    auto holder = deadbolt::Client::connect(c.url());
    auto waiter = deadbolt::Client::connect(c.url());
    // The waiter's release messages come through node 0; the lock lives elsewhere.
    std::string name;
    for (int i = 0; name.empty(); ++i)
        if (c.master_of("wake-" + std::to_string(i)) != 0) name = "wake-" + std::to_string(i);
    deadbolt::MutexOptions o;
    o.ttl = 60s;
    auto lease = holder.acquire(name, o);
    Clock::time_point got_at{};
    std::thread t([&] {
        deadbolt::AcquireOptions how;
        how.deadline = Clock::now() + 40s;
        auto l = waiter.acquire(name, {}, how);
        got_at = Clock::now();
    });
    std::this_thread::sleep_for(300ms);
    auto released_at = Clock::now();
    lease.release();
    t.join();
    EXPECT_LT(got_at - released_at, 10s);  // the release message, not the 60 s expiry
}

TEST(Cluster, AMultiLockOverEveryMasterIsAllOrNothing) {
    auto& c = shared_cluster();
    auto x = deadbolt::Client::connect(c.url());
    auto y = deadbolt::Client::connect(c.url());
    auto names = names_on_every_master(c, "ml-", 1);
    deadbolt::MutexOptions o;
    o.ttl = 1s;  // renewed across the three masters while held
    {
        auto l = x.acquire_all(names, o);
        auto fences = l.fences();
        ASSERT_EQ(fences.size(), 3u);
        for (std::size_t i = 0; i < 3; ++i) {
            EXPECT_EQ(fences[i].name, names[i]);
            EXPECT_GT(fences[i].fence, 0u);
            EXPECT_EQ(c.node(c.master_of(names[i])).raw().cmd({"GET", names[i]}).str, l.token());
        }
        std::this_thread::sleep_for(2500ms);
        EXPECT_TRUE(l.is_current()) << "the renewal did not reach every slot";
        for (const auto& n : names) EXPECT_FALSE(y.mutex(n).try_lock()) << n;
    }
    auto exists = [&](const std::string& n) {
        return c.node(c.master_of(n)).raw().cmd({"EXISTS", n}).integer;
    };
    for (const auto& n : names) EXPECT_EQ(exists(n), 0) << n;

    // One name held elsewhere: nothing is kept, and the waiter gets all three once it goes.
    auto held = y.acquire(names[2]);
    EXPECT_THROW(x.acquire_all(names, o, {.deadline = Clock::now()}), deadbolt::LockError);
    EXPECT_EQ(exists(names[0]), 0) << "a refused MultiLock kept a name";
    std::thread release([&] {
        std::this_thread::sleep_for(200ms);
        held.release();
    });
    auto ml = x.multi_lock(names, o);
    ASSERT_TRUE(ml.try_lock_for(20s));
    release.join();
    EXPECT_FALSE(y.mutex(names[0]).try_lock());
    ml.unlock();
    EXPECT_TRUE(y.mutex(names[0]).try_lock());
    // Names with a common hash tag share a slot and go in one script, as on one server.
    auto tagged = x.acquire_all({"{order-1}:stock", "{order-1}:payment"});
    EXPECT_FALSE(y.mutex("{order-1}:payment").try_lock());
}

TEST(Cluster, ClearErrorsForWhatIsNotACluster) {
    auto& c = shared_cluster();
    auto expect_error = [](const std::string& url, deadbolt::errc want, const std::string& text) {
        try {
            deadbolt::Client::connect(url);
            ADD_FAILURE() << url << " connected";
        } catch (const deadbolt::Error& e) {
            EXPECT_EQ(e.code(), make_error_code(want)) << url << ": " << e.what();
            EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
        }
    };
    deadbolt::test::RedisServer plain;
    expect_error("redis-cluster://127.0.0.1:" + std::to_string(plain.port()), errc::invalid_url,
                 "is not in cluster mode");
    expect_error("redis-cluster://127.0.0.1:" + std::to_string(deadbolt::test::free_port()),
                 errc::connect_failed, "no cluster node answered");
    expect_error(c.url() + "/3", errc::invalid_url, "only database 0");
    expect_error(c.url("sentinel_user=x"), errc::invalid_url, "sentinel_user");
    // A plain redis:// client of one node meets keys that live elsewhere: it says what to use.
    auto one = deadbolt::Client::connect(c.node(c.masters().front()).url());
    std::string elsewhere;
    for (int i = 0; elsewhere.empty(); ++i)
        if (c.master_of("x" + std::to_string(i)) != c.masters().front())
            elsewhere = "x" + std::to_string(i);
    std::error_code ec;
    EXPECT_FALSE(one.mutex(elsewhere).try_lock(ec));
    EXPECT_EQ(ec, make_error_code(errc::invalid_url)) << ec.message();
}

TEST(Cluster, SyncReplicasWaitsOnTheLocksOwnMaster) {
    auto& c = shared_cluster();
    // 1 s: a healthy replica under a loaded CI machine can take longer than 200 ms to answer.
    auto strict = deadbolt::Client::connect(c.url("sync_replicas=1&sync_timeout=1s"));
    auto name = names_on_every_master(c, "sync-", 1);
    for (auto& n : name) {  // every master's replica acknowledges: granted
        auto lease = strict.acquire(n);
        lease.extend(10s);
        lease.release();
    }
    // The replica of one master frozen: that master's grant is refused and not left behind.
    auto m = c.master_of(name[1]);
    auto r = c.replica_of(m);
    c.node(r).pause();
    std::error_code ec;
    EXPECT_FALSE(strict.mutex(name[1]).try_lock(ec));
    auto other_ok = strict.mutex(name[0]).try_lock();  // on another master
    c.node(r).resume();
    EXPECT_EQ(ec, make_error_code(errc::not_replicated)) << ec.message();
    EXPECT_EQ(c.node(m).raw().cmd({"EXISTS", name[1]}).integer, 0);
    EXPECT_TRUE(other_ok);  // the other masters' replicas are fine
}
