// The etcd backend's pure parts: its URLs and the key layout it shares with etcd's own
// concurrency package (etcdctl lock, Go's concurrency.Mutex).
#include <gtest/gtest.h>

#include "backends/etcd/keys.hpp"
#include "backends/etcd/url.hpp"

using deadbolt::ClientOptions;
using deadbolt::detail::contender_key;
using deadbolt::detail::holds_of;
using deadbolt::detail::is_contender;
using deadbolt::detail::is_reader;
using deadbolt::detail::lock_dir;
using deadbolt::detail::parse_etcd_url;
using deadbolt::detail::range_end;
using deadbolt::detail::reader_key;
using deadbolt::detail::reentrant_value;

TEST(EtcdLayout, ContendersAreLeaseIdsInHexUnderTheName) {
    auto dir = lock_dir("app/", "job");
    EXPECT_EQ(dir, "app/job/");
    EXPECT_EQ(contender_key(dir, 0x694d7a3b1c2d), "app/job/694d7a3b1c2d");
    EXPECT_TRUE(is_contender(dir, "app/job/694d7a3b1c2d"));
    EXPECT_FALSE(is_contender(dir, "app/job/x/694d")) << "a key of the name job/x";
    EXPECT_FALSE(is_contender(dir, "app/job/"));
    EXPECT_FALSE(is_contender(dir, "app/jobs/1"));
}

TEST(EtcdLayout, ReadersQueueAmongContendersUnderAMarkOfTheirOwn) {
    auto dir = lock_dir("", "job");
    EXPECT_EQ(reader_key(dir, 0x694d), "job/read-694d");
    EXPECT_TRUE(is_contender(dir, "job/read-694d")) << "a writer or etcdctl lock waits for it";
    EXPECT_TRUE(is_reader(dir, "job/read-694d"));
    EXPECT_FALSE(is_reader(dir, "job/694d")) << "a writer's (and concurrency.Mutex's) key";
    EXPECT_FALSE(is_reader(dir, "job/x/read-694d")) << "a key of the name job/x";
}

TEST(EtcdLayout, AReentrantContenderCountsItsOwnersHolds) {
    EXPECT_EQ(reentrant_value(2, "worker 7"), "2 worker 7");
    EXPECT_EQ(holds_of("2 worker 7", "worker 7"), 2);
    EXPECT_EQ(holds_of("2 worker 7", "worker"), std::nullopt) << "another owner's";
    EXPECT_EQ(holds_of("", "w"), std::nullopt) << "etcdctl lock's value";
    EXPECT_EQ(holds_of("host:1:abc", "w"), std::nullopt) << "a Mutex's token";
    EXPECT_EQ(holds_of("0 w", "w"), std::nullopt);
    EXPECT_EQ(holds_of("-1 w", "w"), std::nullopt);
    EXPECT_EQ(holds_of("1x w", "w"), std::nullopt);
}

TEST(EtcdLayout, ThePrefixRangeEndsAfterEveryKeyUnderIt) {
    EXPECT_EQ(range_end("a/"), "a0");
    EXPECT_EQ(range_end(std::string("a\xff", 2)), "b");
    EXPECT_EQ(range_end(std::string("\xff\xff", 2)), std::string(1, '\0'));
}

TEST(EtcdUrl, MembersCredentialsAndOptions) {
    auto u = parse_etcd_url(
        "etcd://me:p%40ss@h1,h2:2479,[::1]:3000/?prefix=app/&command_timeout=5s", ClientOptions{});
    ASSERT_TRUE(u.ok) << u.error;
    ASSERT_EQ(u.members.size(), 3u);
    EXPECT_EQ(u.members[0].describe(), "h1:2379");
    EXPECT_EQ(u.members[1].describe(), "h2:2479");
    EXPECT_EQ(u.members[2].describe(), "[::1]:3000");
    EXPECT_EQ(u.options.username, "me");
    EXPECT_EQ(u.options.password, "p@ss");
    EXPECT_EQ(u.options.key_prefix, "app/");
    EXPECT_EQ(u.options.command_timeout, std::chrono::seconds(5));
    EXPECT_FALSE(u.options.tls.enabled);
    auto t = parse_etcd_url("etcds://h:2379?ca=/etc/ca.pem", ClientOptions{});
    ASSERT_TRUE(t.ok) << t.error;
    EXPECT_TRUE(t.options.tls.enabled);
    EXPECT_EQ(t.options.tls.ca_file, "/etc/ca.pem");
}

TEST(EtcdUrl, MistakesAreNamed) {
    auto bad = [](const char* url, const char* says) {
        auto u = parse_etcd_url(url, ClientOptions{});
        EXPECT_FALSE(u.ok) << url;
        EXPECT_NE(u.error.find(says), std::string::npos) << url << ": " << u.error;
    };
    bad("redis://h", "expected etcd://");
    bad("etcd://", "empty host");
    bad("etcd://h1,,h2", "empty host");
    bad("etcd://h:99999", "not a number in 1..65535");
    bad("etcd://h:", "empty port");
    bad("etcd://h/locks", "no path");
    bad("etcd://h?db=1", "unknown etcd URL option 'db'");
    bad("etcd://h?ca=/x", "not etcds://");
    bad("etcd://user@h", "a user and a password");
    deadbolt::ClientOptions apart;  // the password from DEADBOLT_PASSWORD or a file
    apart.password = "from-env";
    auto lone = parse_etcd_url("etcd://user@h", apart);
    ASSERT_TRUE(lone.ok) << lone.error;
    EXPECT_EQ(lone.options.username, "user");
    EXPECT_EQ(lone.options.password, "from-env");
    bad("etcd://h?command_timeout=0s", "greater than 0");
}
