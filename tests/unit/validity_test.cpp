#include <gtest/gtest.h>

#include "core/engines.hpp"
#include "core/validity.hpp"
#include "deadbolt/deadbolt.hpp"
#include "deadbolt/redis_options.hpp"

using namespace std::chrono_literals;
using namespace deadbolt::detail;

TEST(Validity, DriftIsOnePercentPlusTwoMs) {
    EXPECT_EQ(drift_margin(30000ms), 302ms);
    EXPECT_EQ(drift_margin(1000ms), 12ms);
    EXPECT_EQ(drift_margin(10ms), std::chrono::microseconds(2100));
}

TEST(Validity, DeadlineCountsFromBeforeTheRequest) {
    Clock::time_point sent{std::chrono::seconds(100)};
    EXPECT_EQ(validity_deadline(sent, 30000ms), sent + 30000ms - 302ms);
    // Even the smallest TTL leaves positive validity.
    EXPECT_GT(validity_deadline(sent, deadbolt::kMinTtl), sent);
}

TEST(Validity, Names) {
    EXPECT_FALSE(validate_name("").ok());
    EXPECT_TRUE(validate_name("x").ok());
    EXPECT_TRUE(validate_name(std::string(deadbolt::kMaxNameBytes, 'a')).ok());
    EXPECT_FALSE(validate_name(std::string(deadbolt::kMaxNameBytes + 1, 'a')).ok());
    EXPECT_TRUE(validate_name(std::string("\0\xff{}", 4)).ok());
}

TEST(Validity, Ttls) {
    EXPECT_FALSE(validate_ttl(0ms, "ttl").ok());
    EXPECT_FALSE(validate_ttl(-1ms, "ttl").ok());
    EXPECT_FALSE(validate_ttl(deadbolt::kMinTtl - 1ms, "ttl").ok());
    EXPECT_TRUE(validate_ttl(deadbolt::kMinTtl, "ttl").ok());
    EXPECT_TRUE(validate_ttl(deadbolt::kMaxTtl, "ttl").ok());
    EXPECT_FALSE(validate_ttl(deadbolt::kMaxTtl + 1ms, "ttl").ok());
    EXPECT_NE(validate_ttl(0ms, "ttl").detail.find("between"), std::string::npos);
}

TEST(Validity, Options) {
    deadbolt::MutexOptions o;
    EXPECT_TRUE(validate_options(o).ok());
    o.renew_every = o.ttl;
    EXPECT_FALSE(validate_options(o).ok());
    o.renew_every = 1s;
    EXPECT_TRUE(validate_options(o).ok());
    o.max_hold = -1ms;
    EXPECT_FALSE(validate_options(o).ok());
    o.max_hold = 0ms;
    o.lock_delay = -1ms;
    EXPECT_FALSE(validate_options(o).ok());
}

// Options no URL sets are checked at connect, before any server is contacted.
TEST(Validity, ClientOptionsAreCheckedAtConnect) {
    deadbolt::ClientOptions o;
    EXPECT_TRUE(validate_options(o).ok());
    deadbolt::RedisOptions r;
    r.command_connections = 0;
    o.engine = std::make_shared<deadbolt::RedisOptions>(r);
    try {
        (void)deadbolt::Client::connect("redis://127.0.0.1:1", o);
        ADD_FAILURE() << "connected with command_connections = 0";
    } catch (const deadbolt::UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("command_connections must be at least 1"),
                  std::string::npos)
            << e.what();
    }
    o.engine = nullptr;
    o.loop_spin = std::chrono::microseconds(-1);
    EXPECT_NE(validate_options(o).detail.find("loop_spin must not be negative"), std::string::npos);
}

// An engine's own options given to a client of another engine are refused before any server is
// contacted, naming both engines.
TEST(Validity, AnEnginesOptionsAreRefusedByTheOthers) {
    deadbolt::ClientOptions o;
    o.engine = std::make_shared<deadbolt::RedisOptions>();
    int tried = 0;
    for (const auto& engine : linked_engines()) {
        if (engine.name == "redis") continue;
        const std::string url = std::string(engine.schemes.front()) + "://127.0.0.1:1/x";
        try {
            (void)deadbolt::Client::connect(url, o);
            ADD_FAILURE() << url << " took RedisOptions";
        } catch (const deadbolt::UsageError& e) {
            EXPECT_NE(std::string(e.what()).find("holds options for redis"), std::string::npos)
                << e.what();
        }
        ++tried;
    }
    if (tried == 0) GTEST_SKIP() << "no engine but Redis is linked in";
}
