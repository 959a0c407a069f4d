// What real faults do to deadbolt's ZooKeeper locks: servers and the leader killed, a holder
// cut off past its session, a create whose reply was lost, a holder's node deleted.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>

#include "deadbolt/deadbolt.hpp"
#include "eventually.hpp"
#include "tcp_proxy.hpp"
#include "zk_ensemble.hpp"

using namespace std::chrono_literals;
using deadbolt::Client;
using deadbolt::test::eventually;
using deadbolt::test::TcpProxy;
using deadbolt::test::ZkEnsemble;
using Clock = std::chrono::steady_clock;

namespace {

// A proxy in front of every server: what a client that goes through them sees can be stalled.
struct Proxied {
    std::vector<std::unique_ptr<TcpProxy>> proxies;
    explicit Proxied(const ZkEnsemble& zk) {
        for (int i = 0; i < 3; ++i)
            proxies.push_back(std::make_unique<TcpProxy>(zk.client_port(i)));
    }
    std::string url(const std::string& query) const {
        std::string hosts;
        for (const auto& p : proxies)
            hosts +=
                (hosts.empty() ? "" : ",") + std::string("127.0.0.1:") + std::to_string(p->port());
        return "zk://" + hosts + query;
    }
    void stall(bool on) {
        for (auto& p : proxies) {
            p->stall_requests(on);
            p->stall_replies(on);
        }
    }
    void stall_replies(bool on) {
        for (auto& p : proxies) p->stall_replies(on);
    }
    void stall_requests(bool on) {
        for (auto& p : proxies) p->stall_requests(on);
    }
};

}  // namespace

TEST(ZkFaults, AHoldingSurvivesItsServerAndTheLeaderBeingKilled) {
    ZkEnsemble zk(3);
    auto c = Client::connect(zk.url("?session_timeout=6s"));
    auto other = Client::connect(zk.url());
    auto held = c.acquire("survives");
    auto fence = held.fence();
    int leader = zk.leader();
    ASSERT_GE(leader, 0);
    zk.stop(leader);
    ASSERT_TRUE(eventually([&] { return zk.leader() >= 0; }, 30s)) << "no new leader";
    // Once the ensemble answers again, it still says: held, by the holding from before.
    auto held_now = [&] {
        try {
            return other.status("survives").held;
        } catch (const deadbolt::ConnectionError&) {
            return false;  // still electing: ask again
        }
    };
    ASSERT_TRUE(eventually(held_now, 30s));
    EXPECT_THROW(other.acquire("survives", {}, {.deadline = Clock::now()}), deadbolt::LockError);
    EXPECT_TRUE(eventually(
        [&] {
            try {
                return held.is_current();
            } catch (const deadbolt::ConnectionError&) {
                return false;  // its server is still catching up: ask again
            }
        },
        10s));
    EXPECT_FALSE(held.lost());
    zk.start(leader);
    held.release();
    auto next = other.acquire("survives", {}, {.deadline = Clock::now() + 10s});
    EXPECT_GT(next.fence(), fence);
}

TEST(ZkFaults, AHolderCutOffPastItsSessionIsToldItLostBeforeAnotherHolds) {
    auto& zk = ZkEnsemble::shared();
    Proxied cut(zk);
    auto c = Client::connect(cut.url("?session_timeout=2s"));
    auto other = Client::connect(zk.url());
    auto held = c.acquire("cut-off");
    std::atomic<Clock::rep> lost_at{0};
    std::stop_callback on_lost(held.stop_token(),
                               [&] { lost_at = Clock::now().time_since_epoch().count(); });
    auto waiter = std::async(std::launch::async, [&] {
        auto l = other.acquire("cut-off", {}, {.deadline = Clock::now() + 30s});
        return std::make_pair(Clock::now(), std::move(l));
    });
    cut.stall(true);
    auto [granted_at, next] = waiter.get();
    // The promise: the cut-off holder's validity ended before anyone else could hold, and it
    // was told (its stop token) then, not when it heard of the expiry.
    EXPECT_LE(held.valid_until(), granted_at) << "validity must end before the session can";
    ASSERT_TRUE(eventually([&] { return lost_at.load() != 0; }, 1s))
        << "the cut-off holder was never told it lost";
    EXPECT_LT(Clock::time_point(Clock::duration(lost_at.load())), held.valid_until() + 1s);
    EXPECT_GT(next.fence(), held.fence());
    // Back on the network the old session is found expired; the client goes on with a new one.
    cut.stall(false);
    next.release();
    auto again = c.acquire("cut-off", {}, {.deadline = Clock::now() + 20s});
    EXPECT_GT(again.fence(), next.fence());
}

TEST(ZkFaults, ACreateWhoseReplyWasLostLeavesNoOrphan) {
    auto& zk = ZkEnsemble::shared();
    Proxied slow(zk);
    deadbolt::ClientOptions o;
    o.command_timeout = 300ms;
    std::atomic<int> unknown{0};
    o.observer = [&](const deadbolt::LockEvent& e) {
        if (e.kind == deadbolt::LockEventKind::unknown_outcome) ++unknown;
    };
    auto c = Client::connect(slow.url("?session_timeout=8s"), o);
    auto other = Client::connect(zk.url());
    other.acquire("lost-create").release();  // the lock's znode exists: our create makes a node
    slow.stall_replies(true);
    auto got = std::async(std::launch::async, [&] {
        return c.acquire("lost-create", {}, {.deadline = Clock::now() + 20s});
    });
    // The create reached the ensemble: its node is in line, though its reply is held back.
    ASSERT_TRUE(eventually([&] { return other.status("lost-create").held; }, 10s));
    std::this_thread::sleep_for(500ms);  // past the command timeout: the outcome is unknown
    slow.stall_replies(false);
    auto held = got.get();
    EXPECT_GE(unknown.load(), 1) << "the create's reply was not lost: this test proved nothing";
    // One node: ours, holding. The first one, whose reply was lost, was found by its guid and
    // is gone (or is the one that holds), not left to block everyone until the session ends.
    auto st = other.status("lost-create");
    EXPECT_EQ(st.waiters, 0) << "an orphan node is still in line";
    EXPECT_EQ(st.last_fence, held.fence());
    held.release();
    EXPECT_NO_THROW(other.acquire("lost-create", {}, {.deadline = Clock::now() + 5s}));
}

// Issue 30 item 2: a holder's node deleted from outside (force-unlock, another tool) is a loss
// told at once by the watch on it, not at the holder's next renewal. The holder's requests are
// held back, so no renewal or check of its own can reach the ensemble: without the watch it
// would learn nothing until its validity ran out, and then as a timeout.
TEST(ZkFaults, AHolderWhoseNodeIsDeletedIsToldAtOnceNotAtItsNextRenewal) {
    auto& zk = ZkEnsemble::shared();
    Proxied cut(zk);
    auto c = Client::connect(cut.url(""));
    auto other = Client::connect(zk.url());
    std::mutex m;
    std::error_code why;
    std::atomic<Clock::rep> lost_at{0};
    deadbolt::MutexOptions o{.ttl = 10s};
    o.on_lost = [&](std::string_view, std::error_code ec) {
        lost_at = Clock::now().time_since_epoch().count();
        std::lock_guard lk(m);
        why = ec;
    };
    auto held = c.acquire("deleted-now", o);
    // A read on the holder's session, answered after the watch it set at the grant: the watch
    // is in place before its requests are held back.
    ASSERT_TRUE(held.is_current());
    cut.stall_requests(true);
    EXPECT_EQ(other.force_unlock("deleted-now"), "mutex");
    ASSERT_TRUE(eventually([&] { return lost_at.load() != 0; }, 20s)) << "never told";
    EXPECT_LT(Clock::time_point(Clock::duration(lost_at.load())), held.valid_until())
        << "told only when its validity ran out: the deletion was not seen";
    {
        std::lock_guard lk(m);
        EXPECT_EQ(why, make_error_code(deadbolt::errc::not_owner)) << why.message();
    }
    EXPECT_TRUE(held.lost());
    cut.stall_requests(false);
}
