// The test fixtures' own promises, where a broken one would make other tests fail for the
// wrong reason.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "redis_server.hpp"  // run_command

using namespace std::chrono_literals;

TEST(Support, ACommandOfOneThreadDoesNotHoldUpAnotherThreadsCommand) {
    // Long commands started by other threads (an `etcdctl lock`, a Kazoo waiter) while this
    // thread runs short ones (reads of the lock's state): a short one must end with its own
    // process, not with a long one that was started while its output pipe was open.
    std::vector<std::future<int>> long_ones;
    std::thread starter([&] {
        for (int i = 0; i < 30; ++i) {
            long_ones.push_back(std::async(std::launch::async, [] {
                return deadbolt::test::run_command({"sleep", "4"});
            }));
            std::this_thread::sleep_for(5ms);
        }
    });
    for (int i = 0; i < 100; ++i) {
        std::string out;
        ASSERT_EQ(deadbolt::test::run_command({"echo", std::to_string(i)}, &out), 0);
        EXPECT_EQ(out, std::to_string(i) + "\n");
    }
    starter.join();
    EXPECT_EQ(long_ones.front().wait_for(0s), std::future_status::timeout)
        << "a short command waited for a long one to end";
    for (auto& f : long_ones) EXPECT_EQ(f.get(), 0);
}
