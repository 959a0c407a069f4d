// The process's local line per lock name (src/core/local_queue.hpp): one thread at a time per
// name, FIFO, a waiter that gives up leaves the line to the next, and names come and go.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <numeric>
#include <thread>
#include <vector>

#include "core/local_queue.hpp"

using deadbolt::detail::LocalQueue;
using namespace std::chrono_literals;

namespace {

using Result = LocalQueue::Result;

// Waits (on_wait) until a thread that must wait has told it is in line.
Result enter_when_told(LocalQueue& q, const std::string& key, std::promise<void>& in_line,
                       std::optional<LocalQueue::Clock::time_point> deadline = std::nullopt,
                       const std::stop_token& cancel = {}) {
    return q.enter(key, deadline, cancel, [&in_line] { in_line.set_value(); });
}

TEST(LocalQueue, OneThreadAtATimePerNameInTheOrderTheyCame) {
    LocalQueue q;
    ASSERT_EQ(q.enter("a", std::nullopt, {}), Result::entered);
    EXPECT_EQ(q.enter("b", LocalQueue::Clock::now(), {}), Result::entered) << "another name";
    std::vector<int> order;
    std::mutex m;
    std::vector<std::thread> waiters;
    constexpr int kWaiters = 8;  // woken together, they would race: only the line orders them
    for (int i = 0; i < kWaiters; ++i) {
        std::promise<void> in_line;
        auto told = in_line.get_future();
        waiters.emplace_back([&, i, in_line = std::move(in_line)]() mutable {
            if (enter_when_told(q, "a", in_line) != Result::entered) {
                ADD_FAILURE() << "waiter " << i << " did not enter";
                return;
            }
            {
                std::lock_guard lk(m);
                order.push_back(i);
            }
            q.leave("a");
        });
        told.wait();  // each in line before the next comes
    }
    {
        std::lock_guard lk(m);
        EXPECT_TRUE(order.empty()) << "a waiter went ahead of the holder";
    }
    q.leave("a");
    for (auto& t : waiters) t.join();
    std::vector<int> came(kWaiters);
    std::iota(came.begin(), came.end(), 0);
    EXPECT_EQ(order, came);
    q.leave("b");
}

TEST(LocalQueue, AWaiterThatGivesUpLeavesTheLineToTheNext) {
    LocalQueue q;
    ASSERT_EQ(q.enter("a", std::nullopt, {}), Result::entered);
    EXPECT_EQ(q.enter("a", LocalQueue::Clock::now() + 20ms, {}), Result::timed_out);
    std::stop_source stop;
    std::promise<void> first_in_line, second_in_line;
    auto first_told = first_in_line.get_future(), second_told = second_in_line.get_future();
    auto cancelled = std::async(std::launch::async, [&] {
        return enter_when_told(q, "a", first_in_line, std::nullopt, stop.get_token());
    });
    first_told.wait();
    auto next = std::async(std::launch::async, [&] {
        auto r = enter_when_told(q, "a", second_in_line);
        if (r == Result::entered) q.leave("a");
        return r;
    });
    second_told.wait();
    stop.request_stop();
    EXPECT_EQ(cancelled.get(), Result::cancelled);
    q.leave("a");
    EXPECT_EQ(next.get(), Result::entered) << "the one behind a cancelled waiter";
    EXPECT_EQ(q.enter("a", LocalQueue::Clock::now(), {}), Result::entered) << "the line is free";
    q.leave("a");
}

TEST(LocalQueue, ManyNamesComeAndGoAndEachIsStillOneAtATime) {
    LocalQueue q;
    for (int round = 0; round < 3; ++round)
        for (int i = 0; i < 200; ++i) {
            const std::string key = "n" + std::to_string(i);
            ASSERT_EQ(q.enter(key, LocalQueue::Clock::now(), {}), Result::entered) << key;
            EXPECT_EQ(q.enter(key, LocalQueue::Clock::now(), {}), Result::timed_out) << key;
            q.leave(key);
        }
    // Threads on a few names, again and again: each name has one holder at a time.
    std::atomic<int> inside[4] = {};
    std::atomic<bool> overlap{false};
    std::vector<std::thread> ts;
    for (int t = 0; t < 8; ++t)
        ts.emplace_back([&, t] {
            const int k = t % 4;
            const std::string key = "n" + std::to_string(k);
            for (int i = 0; i < 200; ++i) {
                if (q.enter(key, std::nullopt, {}) != Result::entered) {
                    ADD_FAILURE() << key << " was not entered";
                    return;
                }
                if (inside[k].fetch_add(1) != 0) overlap = true;
                std::this_thread::yield();  // another thread gets the CPU inside the turn
                inside[k].fetch_sub(1);
                q.leave(key);
            }
        });
    for (auto& t : ts) t.join();
    EXPECT_FALSE(overlap.load());
}

}  // namespace
