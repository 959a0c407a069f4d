#include <gtest/gtest.h>

#include "deadbolt/duration.hpp"

using deadbolt::format_duration;
using deadbolt::parse_duration;
using std::chrono::milliseconds;

TEST(Duration, Units) {
    EXPECT_EQ(parse_duration("500ms"), milliseconds(500));
    EXPECT_EQ(parse_duration("30s"), milliseconds(30000));
    EXPECT_EQ(parse_duration("5m"), milliseconds(300000));
    EXPECT_EQ(parse_duration("2h"), milliseconds(7200000));
    EXPECT_EQ(parse_duration("1d"), milliseconds(86400000));
    EXPECT_EQ(parse_duration("1m30s"), milliseconds(90000));
    EXPECT_EQ(parse_duration("0s"), milliseconds(0));
    EXPECT_EQ(parse_duration("1500us"), milliseconds(2));  // rounded up, never silently 0
    EXPECT_EQ(parse_duration("1us"), milliseconds(1));
    EXPECT_EQ(parse_duration("1.5s"), milliseconds(1500));
    EXPECT_EQ(parse_duration("0.25m"), milliseconds(15000));
    EXPECT_EQ(parse_duration("2.0005s"), milliseconds(2001));  // rounded up
    EXPECT_EQ(parse_duration("1m0.5s"), milliseconds(60500));
    EXPECT_FALSE(parse_duration(".5s"));
    EXPECT_FALSE(parse_duration("1..5s"));
}

TEST(Duration, RejectsWithReason) {
    std::string why;
    EXPECT_FALSE(parse_duration("30", &why));
    EXPECT_NE(why.find("no unit"), std::string::npos);
    EXPECT_FALSE(parse_duration("-5s", &why));
    EXPECT_NE(why.find("not a duration"), std::string::npos);
    EXPECT_FALSE(parse_duration("5 s", &why));
    EXPECT_FALSE(parse_duration("5x", &why));
    EXPECT_NE(why.find("unknown unit 'x'"), std::string::npos);
    EXPECT_FALSE(parse_duration("", &why));
    EXPECT_NE(why.find("empty"), std::string::npos);
    EXPECT_FALSE(parse_duration("99999999999999999999s", &why));
    EXPECT_NE(why.find("too large"), std::string::npos);
    EXPECT_FALSE(parse_duration("9223372036854775s", &why));  // overflows in µs
    EXPECT_FALSE(parse_duration("1.5.5s", &why));
}

TEST(Duration, Format) {
    EXPECT_EQ(format_duration(milliseconds(850)), "850ms");
    EXPECT_EQ(format_duration(milliseconds(12345)), "12.3s");
    EXPECT_EQ(format_duration(milliseconds(245000)), "4m05s");
    EXPECT_EQ(format_duration(milliseconds(3 * 3600000 + 60000)), "3h01m");
    EXPECT_EQ(format_duration(milliseconds(-5)), "-5ms");
}
