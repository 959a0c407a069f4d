#include <gtest/gtest.h>

#include "deadbolt/fence.hpp"

using deadbolt::kMaxFence;
using deadbolt::parse_fence;

TEST(Fence, ReadsDecimalIntegersInRange) {
    EXPECT_EQ(parse_fence("1"), 1U);
    EXPECT_EQ(parse_fence("1763900000123456"), 1763900000123456U);
    EXPECT_EQ(parse_fence("9007199254740991"), kMaxFence);
    EXPECT_EQ(parse_fence("007"), 7U);
}

TEST(Fence, RefusesAnythingElseWithTheReason) {
    std::string why;
    EXPECT_FALSE(parse_fence("", &why));
    EXPECT_NE(why.find("empty fence"), std::string::npos);
    for (const char* bad : {"0x10", "+5", "-5", " 7", "7 ", "1e3", "12a", "1.0"}) {
        EXPECT_FALSE(parse_fence(bad, &why)) << bad;
        EXPECT_NE(why.find("not a decimal integer"), std::string::npos) << bad << ": " << why;
    }
    for (const char* big :
         {"9007199254740992", "99999999999999999999999", "18446744073709551616000"}) {
        EXPECT_FALSE(parse_fence(big, &why)) << big;
        EXPECT_NE(why.find("out of range"), std::string::npos) << big << ": " << why;
    }
    EXPECT_FALSE(parse_fence("0", &why));
    EXPECT_NE(why.find("no fence"), std::string::npos);
    EXPECT_FALSE(parse_fence("000", &why));
}
