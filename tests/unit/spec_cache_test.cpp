#include <gtest/gtest.h>

#include <string>

#include "backends/redis/spec_cache.hpp"

using namespace deadbolt::detail;
using namespace std::chrono_literals;

namespace {

std::shared_ptr<const RedisSpec> made(const std::string& name, std::chrono::milliseconds ttl) {
    deadbolt::MutexOptions o;
    o.ttl = ttl;
    return std::make_shared<const RedisSpec>(mutex_spec("app:", name, o));
}

}  // namespace

TEST(SpecCache, FindsASpecOnlyForItsNameAndTtls) {
    SpecCache cache;
    EXPECT_EQ(cache.find("job", 10s, 5s), nullptr);
    auto job = made("job", 10s);
    cache.keep(job);
    EXPECT_EQ(cache.find("job", 10s, 5s), job);
    EXPECT_EQ(cache.find("job", 11s, 5s), nullptr);  // another TTL: another validity
    EXPECT_EQ(cache.find("job", 10s, 6s), nullptr);  // another waiter_ttl: another standby
    EXPECT_EQ(cache.find("jobs", 10s, 5s), nullptr);
}

TEST(SpecCache, ManyNamesEachFindTheirOwnKeysOrNone) {
    SpecCache cache;
    for (int i = 0; i < 1000; ++i) cache.keep(made("n" + std::to_string(i), 10s));
    int found = 0;
    for (int i = 0; i < 1000; ++i) {
        auto s = cache.find("n" + std::to_string(i), 10s, 5s);
        if (!s) continue;
        ++found;
        EXPECT_EQ(s->keys.front(), "app:n" + std::to_string(i));
    }
    EXPECT_GT(found, 0);
    EXPECT_LE(found, 64);  // bounded: a client of a million names keeps a few
    EXPECT_NE(cache.find("n999", 10s, 5s), nullptr);  // the last kept is there
}
