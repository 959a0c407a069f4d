// Redlock's arithmetic: majorities, the two-round fence, node timeouts, node-set checks.
#include <gtest/gtest.h>

#include "core/quorum.hpp"
#include "deadbolt/error.hpp"

using namespace std::chrono_literals;
using namespace deadbolt::detail;

TEST(Quorum, AnyTwoMajoritiesShareANode) {
    for (int n = 1; n <= 9; ++n) {
        EXPECT_GT(2 * majority(n), n) << n;        // two majorities overlap
        EXPECT_LE(2 * (majority(n) - 1), n) << n;  // one node fewer would not
    }
    EXPECT_EQ(majority(3), 2);
    EXPECT_EQ(majority(5), 3);
    EXPECT_EQ(majority(4), 3);
}

TEST(Quorum, RoundTwoFenceIsAboveEveryCounterAndTheTimeFloor) {
    EXPECT_EQ(redlock_fence({5, 9, 7}, 3), 10U);
    EXPECT_EQ(redlock_fence({5, 9, 7}, 100), 101U);  // counters lost: the clock still orders
    EXPECT_EQ(redlock_fence({}, 0), 1U);
}

TEST(Quorum, NodeTimeoutIsFarBelowTheTtl) {
    EXPECT_EQ(node_timeout(30s, 5s), 3s);
    EXPECT_EQ(node_timeout(30s, 1s), 1s);   // never more than the command timeout
    EXPECT_EQ(node_timeout(5ms, 1s), 1ms);  // never zero
}

TEST(Quorum, NodeSetsThatWeakenRedlockAreRefused) {
    using deadbolt::errc;
    auto bad = [](const NodeSetCheck& c) { return c.status.ec; };
    EXPECT_EQ(bad(check_node_set({"10.0.0.1:6379", "10.0.0.2:6379"}, false)),
              deadbolt::make_error_code(errc::invalid_argument));
    EXPECT_TRUE(check_node_set({"10.0.0.1:6379", "10.0.0.2:6379"}, true).status.ok());
    auto twice = check_node_set({"10.0.0.1:6379", "10.0.0.2:6379", "10.0.0.1:6379"}, false);
    EXPECT_EQ(bad(twice), deadbolt::make_error_code(errc::invalid_argument));
    EXPECT_NE(twice.status.detail.find("listed twice"), std::string::npos);
    auto three = check_node_set({"a:1", "b:1", "c:1"}, false);
    EXPECT_TRUE(three.status.ok());
    EXPECT_TRUE(three.warning.empty());
    auto four = check_node_set({"a:1", "b:1", "c:1", "d:1"}, false);
    EXPECT_TRUE(four.status.ok());
    EXPECT_NE(four.warning.find("odd"), std::string::npos);
}
