// FairMutex: FIFO across clients, direct handoff to one waiter, dead waiters skipped.
#include <gtest/gtest.h>

#include <mutex>
#include <thread>

#include "deadbolt/deadbolt.hpp"
#include "redis_server.hpp"

using namespace std::chrono_literals;
using deadbolt::test::RedisServer;
using Clock = std::chrono::steady_clock;

template class std::unique_lock<deadbolt::FairMutex>;

namespace {

long long queue_length(RedisServer& srv) {
    return srv.raw().cmd({"LLEN", "{fair}:queue"}).integer;
}

bool wait_for_queue(RedisServer& srv, long long n) {
    for (auto until = Clock::now() + 10s; Clock::now() < until; std::this_thread::sleep_for(5ms))
        if (queue_length(srv) == n) return true;
    return false;
}

}  // namespace

TEST(FairMutex, WaitersOfDifferentClientsGetTheLockInArrivalOrder) {
    RedisServer srv;
    auto holder = deadbolt::Client::connect(srv.url());
    auto h = holder.fair_mutex("fair");
    h.lock();
    std::vector<deadbolt::Client> clients;
    std::vector<std::thread> waiters;
    std::mutex order_m;
    std::vector<int> order;
    for (int i = 0; i < 5; ++i) {
        clients.push_back(deadbolt::Client::connect(srv.url()));
        waiters.emplace_back([&, i, c = clients.back()] {
            auto m = c.fair_mutex("fair");
            std::lock_guard lk(m);
            std::lock_guard olk(order_m);
            order.push_back(i);
        });
        ASSERT_TRUE(wait_for_queue(srv, i + 1)) << "waiter " << i << " never queued";
    }
    h.unlock();
    for (auto& t : waiters) t.join();
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
    EXPECT_EQ(srv.raw().cmd({"EXISTS", "fair", "{fair}:queue", "{fair}:alive"}).integer, 0);
}

TEST(FairMutex, ReleaseHandsTheLockDirectlyToTheNextWaiterWithANewFence) {
    RedisServer srv;
    auto a = deadbolt::Client::connect(srv.url());
    auto b = deadbolt::Client::connect(srv.url());
    auto ma = a.fair_mutex("fair");
    auto mb = b.fair_mutex("fair");
    ma.lock();
    auto fence = ma.lease().fence();
    auto token = ma.lease().token();
    std::thread waiter([&] { mb.lock(); });
    ASSERT_TRUE(wait_for_queue(srv, 1));
    auto raw = srv.raw();
    ma.unlock();
    // The release itself gave the key to the waiter: nobody can barge in between.
    auto holder = raw.cmd({"GET", "fair"});
    ASSERT_EQ(holder.type, deadbolt::test::RawReply::string_t);
    EXPECT_NE(holder.str, token);
    EXPECT_FALSE(ma.try_lock());
    waiter.join();
    EXPECT_EQ(mb.lease().token(), holder.str);
    EXPECT_GT(mb.lease().fence(), fence);
    mb.unlock();
}

TEST(FairMutex, DeadWaiterIsSkipped) {
    RedisServer srv;
    auto a = deadbolt::Client::connect(srv.url());
    auto b = deadbolt::Client::connect(srv.url());
    auto ma = a.fair_mutex("fair");
    auto mb = b.fair_mutex("fair");
    ma.lock();
    // A waiter that queued, then died: its keep-alive runs out 300 ms from now (server time).
    auto raw = srv.raw();
    auto now = raw.cmd({"TIME"});
    long long now_ms =
        std::stoll(now.elements[0].str) * 1000 + std::stoll(now.elements[1].str) / 1000;
    raw.cmd({"RPUSH", "{fair}:queue", "ghost"});
    raw.cmd({"ZADD", "{fair}:alive", std::to_string(now_ms + 300), "ghost"});
    std::thread waiter([&] { mb.lock(); });
    bool queued_behind_ghost = wait_for_queue(srv, 2);
    std::this_thread::sleep_for(400ms);
    EXPECT_EQ(raw.cmd({"LINDEX", "{fair}:queue", "0"}).str, "ghost");
    ma.unlock();
    auto holder = raw.cmd({"GET", "fair"});  // granted by the release, skipping the ghost
    waiter.join();
    EXPECT_TRUE(queued_behind_ghost);
    EXPECT_EQ(holder.str, mb.lease().token());
    EXPECT_TRUE(mb.owns_lock());
    EXPECT_EQ(queue_length(srv), 0);
    mb.unlock();
}

TEST(FairMutex, WaiterThatGivesUpLeavesTheQueue) {
    RedisServer srv;
    auto a = deadbolt::Client::connect(srv.url());
    auto b = deadbolt::Client::connect(srv.url());
    auto ma = a.fair_mutex("fair");
    auto mb = b.fair_mutex("fair");
    ma.lock();
    EXPECT_FALSE(mb.try_lock_for(200ms));
    EXPECT_TRUE(wait_for_queue(srv, 0));  // the abandon runs in the background
    ma.unlock();
    EXPECT_EQ(srv.raw().cmd({"EXISTS", "fair"}).integer, 0);  // not handed to the quitter
}
