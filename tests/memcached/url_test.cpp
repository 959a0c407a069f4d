// memcached:// URLs: what they take, and what they refuse with the reason.
#include <gtest/gtest.h>

#include "backends/memcached/url.hpp"

using deadbolt::ClientOptions;
using deadbolt::detail::parse_mc_url;

namespace {

TEST(McUrl, ServersPortsAndOptions) {
    auto u = parse_mc_url("memcached://a,b:11212,[::1]:7/?prefix=app:&command_timeout=2s", {});
    ASSERT_TRUE(u.ok) << u.error;
    ASSERT_EQ(u.servers.size(), 3u);
    EXPECT_EQ(u.servers[0].port, 11211);
    EXPECT_EQ(u.servers[1].port, 11212);
    EXPECT_EQ(u.servers[2].describe(), "[::1]:7");
    EXPECT_EQ(u.options.key_prefix, "app:");
    EXPECT_EQ(u.options.command_timeout, std::chrono::seconds(2));
    EXPECT_FALSE(u.allow_evictions);
    EXPECT_TRUE(parse_mc_url("memcached://h?allow_evictions=true", {}).allow_evictions);
}

TEST(McUrl, WhatCannotBeKeptIsRefusedWithTheReason) {
    struct Case {
        const char* url;
        const char* says;
    } cases[] = {
        {"memcached://u:p@h", "no users or passwords"},
        {"memcached://h?password=x", "no users or passwords"},
        {"memcached://h:1,h:1", "listed twice"},
        {"memcached://h/db", "no path"},
        {"memcached://h?ttl=3", "unknown memcached URL option 'ttl'"},
        {"memcached://h?allow_evictions=maybe", "expected true or false"},
        {"memcache://h", "expected memcached://"},
        {"memcached://", ""},
    };
    for (const auto& c : cases) {
        auto u = parse_mc_url(c.url, ClientOptions{});
        EXPECT_FALSE(u.ok) << c.url;
        EXPECT_NE(u.error.find(c.says), std::string::npos) << c.url << ": " << u.error;
    }
}

}  // namespace
