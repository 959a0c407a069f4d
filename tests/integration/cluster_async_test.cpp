// The asynchronous API on a Redis Cluster: attempts and releases run on the client's event
// loop, follow ASK and MOVED while a slot migrates, and one stalled master holds up nothing
// bound for the others.
#include <gtest/gtest.h>

#include <asio/redirect_error.hpp>
#include <asio/use_future.hpp>

#include <mutex>
#include <string>
#include <vector>

#include "deadbolt/async.hpp"
#include "deadbolt/deadbolt.hpp"
#include "redis_cluster.hpp"

using namespace std::chrono_literals;
using deadbolt::test::RedisCluster;
using Clock = std::chrono::steady_clock;

namespace {

deadbolt::Lease acquired(deadbolt::Client& c, const std::string& name) {
    return deadbolt::async_acquire(c, name, {.ttl = 60s}, {.deadline = Clock::now() + 20s},
                                   asio::use_future)
        .get();
}

void released(deadbolt::Lease& l) {
    deadbolt::async_release(l, asio::use_future).get();
}

// A name served by master m of c.
std::string name_on(RedisCluster& c, std::size_t m, const std::string& stem) {
    for (int i = 0;; ++i)
        if (auto n = stem + std::to_string(i); c.master_of(n) == m) return n;
}

}  // namespace

TEST(ClusterAsync, AttemptsAndReleasesFollowAskAndMovedWhileTheSlotMigrates) {
    RedisCluster c;
    auto client = deadbolt::Client::connect(c.url());
    auto stale = deadbolt::Client::connect(c.url());  // keeps the map of before the move
    const std::string name = "moving";
    auto slot = c.slot(name);
    auto from = c.master_of(name);
    auto to = c.masters().front() == from ? c.masters()[1] : c.masters().front();
    auto warm = acquired(stale, name);
    released(warm);
    auto held = acquired(client, name);

    c.migrate_begin(slot, from, to);
    c.migrate_keys(slot, from, to);  // `from` answers ASK: the keys are on `to` now
    std::error_code refused;
    auto none = deadbolt::async_acquire(stale, name, {}, {.deadline = Clock::now()},
                                        asio::redirect_error(asio::use_future, refused))
                    .get();
    EXPECT_EQ(refused, deadbolt::errc::not_acquired) << refused.message();  // held, and no error
    EXPECT_FALSE(none);
    released(held);  // by way of ASK too
    EXPECT_EQ(c.node(to).raw().cmd({"EXISTS", name}).integer, 0);
    // (A free name cannot be taken until the move ends: the importing node answers a script
    // whose keys are not all there with TRYAGAIN, as Redis Cluster does for any multi-key call.)

    c.migrate_end(slot, to);  // `from` answers MOVED to a client whose map still names it
    auto moved = acquired(stale, name);
    EXPECT_EQ(c.node(to).raw().cmd({"GET", name}).str, moved.token());
    EXPECT_GT(moved.fence(), held.fence());
    released(moved);
    EXPECT_EQ(c.node(to).raw().cmd({"EXISTS", name}).integer, 0);
}

TEST(ClusterAsync, AStalledMasterHoldsUpNothingBoundForTheOthers) {
    RedisCluster c;
    auto masters = c.masters();
    auto stalled = masters[0], healthy = masters[1];
    auto on_stalled = name_on(c, stalled, "stalled-"), on_healthy = name_on(c, healthy, "ok-");
    std::mutex m;
    std::vector<std::string> heard;  // "kind name", in the order the loop did the work
    deadbolt::ClientOptions o;
    o.observer = [&](const deadbolt::LockEvent& e) {
        std::lock_guard lk(m);
        heard.push_back(std::to_string(static_cast<int>(e.kind)) + " " + std::string(e.name));
    };
    auto client = deadbolt::Client::connect(c.url(), o);
    for (const auto& n : {on_stalled, on_healthy}) {  // the map and both sessions are up
        auto l = acquired(client, n);
        released(l);
    }
    {
        std::lock_guard lk(m);
        heard.clear();
    }
    c.node(stalled).pause();
    auto waiting = deadbolt::async_acquire(client, on_stalled, {.ttl = 60s},
                                           {.deadline = Clock::now() + 3s}, asio::use_future);
    auto quick = acquired(client, on_healthy);  // sent after the stalled one, answered first
    {
        std::lock_guard lk(m);
        ASSERT_FALSE(heard.empty());
        EXPECT_EQ(
            heard.front(),
            std::to_string(static_cast<int>(deadbolt::LockEventKind::granted)) + " " + on_healthy)
            << "the stalled master's attempt ended before the healthy one was answered: it "
               "held up the loop";
    }
    released(quick);
    c.node(stalled).resume();
    std::error_code late;  // granted once answered or failed over, or a retryable error
    try {
        waiting.get();
    } catch (const std::system_error& e) {
        late = e.code();
    }
    EXPECT_TRUE(!late || deadbolt::is_retryable(late)) << late.message();
}
