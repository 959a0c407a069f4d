// The event loop's spin (ClientOptions::loop_spin) is for a loop with a CPU to itself: on one
// CPU it would keep the threads it wakes from running.
#include "core/event_loop.hpp"

#include <gtest/gtest.h>
#include <sched.h>

#include <chrono>
#include <future>

#include "eventually.hpp"
#include "process_threads.hpp"

namespace deadbolt::detail {
namespace {

using namespace std::chrono_literals;

// The calling thread on one CPU while it lives (threads it starts inherit that).
struct OnOneCpu {
    cpu_set_t before{};
    OnOneCpu() {
        EXPECT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
        cpu_set_t one;
        CPU_ZERO(&one);
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &before)) {
                CPU_SET(c, &one);
                break;
            }
        EXPECT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
    }
    ~OnOneCpu() { sched_setaffinity(0, sizeof before, &before); }
    OnOneCpu(const OnOneCpu&) = delete;
    OnOneCpu& operator=(const OnOneCpu&) = delete;
};

long loop_sleeps() {
    long n = 0;
    for (const auto& [tid, sleeps] : test::sleeps_of_threads("deadbolt-loop")) n += sleeps;
    return n;
}

TEST(EventLoop, OnOneCpuOfItsAffinityItSleepsRightAfterItsWorkInsteadOfSpinning) {
    OnOneCpu pinned;
    EXPECT_EQ(EventLoop::usable_cpus(), 1u);
    EventLoop loop(10s);  // a spin this long would keep it awake for the whole test
    auto slept_since = [](long before) {
        return test::eventually([&] { return loop_sleeps() > before; }, 5s);
    };
    ASSERT_TRUE(slept_since(0)) << "the loop never went idle";
    auto idle = loop_sleeps();
    std::promise<void> ran;
    loop.post([&] { ran.set_value(); });
    ran.get_future().get();
    EXPECT_TRUE(slept_since(idle)) << "the loop spun after its work instead of sleeping";
}

}  // namespace
}  // namespace deadbolt::detail
