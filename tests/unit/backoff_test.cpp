#include <gtest/gtest.h>

#include "core/backoff.hpp"

using namespace std::chrono_literals;
using deadbolt::detail::jittered_backoff;

TEST(Backoff, DoublesUpToTheCapWithHalfFixed) {
    EXPECT_EQ(jittered_backoff(0, 10ms, 1000ms, 0.0), 5ms);
    EXPECT_EQ(jittered_backoff(0, 10ms, 1000ms, 0.999), 9ms);
    EXPECT_EQ(jittered_backoff(3, 10ms, 1000ms, 0.0), 40ms);
    EXPECT_EQ(jittered_backoff(3, 10ms, 1000ms, 0.999), 79ms);
    EXPECT_EQ(jittered_backoff(20, 10ms, 1000ms, 0.0), 500ms);
    EXPECT_EQ(jittered_backoff(200, 10ms, 1000ms, 0.999), 999ms);  // no overflow
}

TEST(Backoff, RandomStaysInRange) {
    for (int i = 0; i < 1000; ++i) {
        auto d = jittered_backoff(2, 10ms, 1000ms);
        EXPECT_GE(d, 20ms);
        EXPECT_LT(d, 40ms);
        auto j = deadbolt::detail::random_jitter(5ms);
        EXPECT_GE(j, 0ms);
        EXPECT_LE(j, 5ms);
    }
    EXPECT_EQ(deadbolt::detail::random_jitter(0ms), 0ms);
}
