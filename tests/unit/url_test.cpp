#include <gtest/gtest.h>

#include <memory>

#include "backends/redis/net/url.hpp"

using deadbolt::detail::Endpoint;
using deadbolt::detail::kSentinelPort;
using deadbolt::detail::parse_sentinel_url;
using deadbolt::detail::parse_url;

namespace {
Endpoint ok(const std::string& url) {
    auto r = parse_url(url, {});
    EXPECT_TRUE(r.ok) << url << ": " << r.error;
    return r.endpoint;
}
std::string err(const std::string& url) {
    auto r = parse_url(url, {});
    EXPECT_FALSE(r.ok) << url;
    return r.error;
}
}  // namespace

TEST(Url, PlainHostPortDb) {
    auto e = ok("redis://cache.internal:6380/3");
    EXPECT_EQ(e.kind, Endpoint::Kind::tcp);
    EXPECT_EQ(e.host, "cache.internal");
    EXPECT_EQ(e.port, 6380);
    EXPECT_EQ(e.redis.db, 3);
    EXPECT_FALSE(e.options.tls.enabled);
    auto d = ok("redis://localhost");
    EXPECT_EQ(d.port, 6379);
    EXPECT_EQ(d.redis.db, 0);
}

TEST(Url, UserAndPasswordWithEscapes) {
    auto e = ok("redis://app:p%40ss%3Aw0rd@h:1");
    EXPECT_EQ(e.options.username, "app");
    EXPECT_EQ(e.options.password, "p@ss:w0rd");
    auto p = ok("redis://:only-pass@h");
    EXPECT_EQ(p.options.username, "");
    EXPECT_EQ(p.options.password, "only-pass");
    auto lone = ok("redis://secret@h");
    EXPECT_EQ(lone.options.password, "secret");
    // With the password given apart (DEADBOLT_PASSWORD, --password-file), a lone userinfo is
    // the user, as the grammar redis://[user[:password]@]host reads.
    deadbolt::ClientOptions apart;
    apart.password = "from-env";
    auto user = parse_url("redis://u1@h", apart);
    ASSERT_TRUE(user.ok) << user.error;
    EXPECT_EQ(user.endpoint.options.username, "u1");
    EXPECT_EQ(user.endpoint.options.password, "from-env");
    EXPECT_NE(err("redis://u:%zz@h").find("escape"), std::string::npos);
}

TEST(Url, Ipv6) {
    auto e = ok("redis://[::1]:7000");
    EXPECT_EQ(e.host, "::1");
    EXPECT_EQ(e.port, 7000);
    EXPECT_EQ(e.describe(), "[::1]:7000");
    err("redis://[::1");
    err("redis://[::1]x");
}

TEST(Url, TlsAndQueryOptions) {
    auto e =
        ok("rediss://h:6390?ca=/etc/ca.pem&cert=/c.pem&key=/k.pem&sni=redis.example&verify=0"
           "&connect_timeout=250ms&command_timeout=3s&prefix=app%3A&keepalive=0");
    EXPECT_TRUE(e.options.tls.enabled);
    EXPECT_EQ(e.options.tls.ca_file, "/etc/ca.pem");
    EXPECT_EQ(e.options.tls.cert_file, "/c.pem");
    EXPECT_EQ(e.options.tls.key_file, "/k.pem");
    EXPECT_EQ(e.options.tls.sni, "redis.example");
    EXPECT_FALSE(e.options.tls.verify);
    EXPECT_EQ(e.options.connect_timeout.count(), 250);
    EXPECT_EQ(e.options.command_timeout.count(), 3000);
    EXPECT_EQ(e.options.key_prefix, "app:");
    EXPECT_FALSE(e.options.keepalive);
    EXPECT_NE(err("redis://h?ca=/x").find("rediss"), std::string::npos);
    EXPECT_NE(err("rediss://h?cert=/c.pem").find("key="), std::string::npos);
}

TEST(Url, UnixSocket) {
    auto e = ok("unix:///var/run/redis/redis.sock?db=2&password=pw");
    EXPECT_EQ(e.kind, Endpoint::Kind::unix_socket);
    EXPECT_EQ(e.path, "/var/run/redis/redis.sock");
    EXPECT_EQ(e.redis.db, 2);
    EXPECT_EQ(e.options.password, "pw");
    EXPECT_EQ(e.describe(), "unix:/var/run/redis/redis.sock");
    EXPECT_NE(err("unix://relative.sock").find("absolute"), std::string::npos);
}

TEST(Url, BadUrlsSayWhatIsWrong) {
    EXPECT_NE(err("").find("empty"), std::string::npos);
    EXPECT_NE(err("localhost:6379").find("no scheme"), std::string::npos);
    EXPECT_NE(err("http://h").find("scheme 'http'"), std::string::npos);
    EXPECT_NE(err("redis://").find("no host"), std::string::npos);
    EXPECT_NE(err("redis://h:").find("empty port"), std::string::npos);
    EXPECT_NE(err("redis://h:0").find("1..65535"), std::string::npos);
    EXPECT_NE(err("redis://h:65536").find("1..65535"), std::string::npos);
    EXPECT_NE(err("redis://h/x").find("database"), std::string::npos);
    EXPECT_NE(err("redis://h/-1").find("database"), std::string::npos);
    EXPECT_NE(err("redis://h?nope=1").find("unknown URL option 'nope'"), std::string::npos);
    EXPECT_NE(err("redis://h?db").find("no value"), std::string::npos);
    EXPECT_NE(err("redis://h?connect_timeout=5").find("no unit"), std::string::npos);
    EXPECT_NE(err("redis://h?connect_timeout=0ms").find("greater than 0"), std::string::npos);
    EXPECT_NE(err("redis://h?verify=maybe").find("0 or 1"), std::string::npos);
}

TEST(Url, UrlOverridesBaseOptions) {
    deadbolt::ClientOptions base;
    base.key_prefix = "base:";
    base.command_timeout = std::chrono::milliseconds(10);
    auto r = parse_url("redis://h?prefix=url:", base);
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.endpoint.options.key_prefix, "url:");
    EXPECT_EQ(r.endpoint.options.command_timeout.count(), 10);
}

TEST(Url, RedlockNodeListSharesCredentialsAndOptions) {
    auto r = deadbolt::detail::parse_node_list(
        "redlock://u:p%40w@10.0.0.1:7001,10.0.0.2,[::1]:7003/2?command_timeout=50ms&allow_fewer=1",
        {});
    ASSERT_TRUE(r.ok) << r.error;
    ASSERT_EQ(r.nodes.size(), 3U);
    EXPECT_TRUE(r.allow_fewer);
    EXPECT_EQ(r.nodes[0].port, 7001);
    EXPECT_EQ(r.nodes[1].port, 6379);
    EXPECT_EQ(r.nodes[2].host, "::1");
    for (const auto& n : r.nodes) {
        EXPECT_EQ(n.options.password, "p@w");
        EXPECT_EQ(n.redis.db, 2);
        EXPECT_EQ(n.options.command_timeout, std::chrono::milliseconds(50));
    }
}

TEST(Url, BadRedlockNodeListsSayWhatIsWrong) {
    using deadbolt::detail::parse_node_list;
    EXPECT_NE(parse_node_list("redis://a:1,b:2", {}).error.find("expected redlock://"),
              std::string::npos);
    EXPECT_NE(parse_node_list("redlock://a:1,,b:2", {}).error.find("empty server"),
              std::string::npos);
    EXPECT_NE(parse_node_list("redlock://a:1,b:x", {}).error.find("node 'b:x'"), std::string::npos);
    EXPECT_NE(parse_node_list("redlock://a,b,c?allow_fewer=maybe", {}).error.find("allow_fewer"),
              std::string::npos);
    EXPECT_FALSE(parse_node_list("redlock://a,b,c?nonsense=1", {}).ok);
    EXPECT_FALSE(parse_node_list("redlock://a,b,c", {}).allow_fewer);
    // The fence round is on unless turned off.
    EXPECT_TRUE(parse_node_list("redlock://a,b,c", {}).fencing);
    auto off = parse_node_list("redlock://a,b,c?fencing=0&command_timeout=50ms", {});
    ASSERT_TRUE(off.ok) << off.error;
    EXPECT_FALSE(off.fencing);
    EXPECT_EQ(off.nodes[2].options.command_timeout, std::chrono::milliseconds(50));
    EXPECT_NE(parse_node_list("redlock://a,b,c?fencing=yes!", {}).error.find("fencing"),
              std::string::npos);
}

TEST(Url, ClusterUrlsListSeedsWithSharedOptions) {
    using deadbolt::detail::parse_cluster_url;
    auto r = parse_cluster_url("redis-cluster://u:p@a:7000,b?prefix=app:&command_timeout=50ms", {});
    ASSERT_TRUE(r.ok) << r.error;
    ASSERT_EQ(r.nodes.size(), 2u);
    EXPECT_EQ(r.nodes[0].host, "a");
    EXPECT_EQ(r.nodes[0].port, 7000);
    EXPECT_EQ(r.nodes[1].port, 6379);
    for (auto& n : r.nodes) {
        EXPECT_EQ(n.options.username, "u");
        EXPECT_EQ(n.options.password, "p");
        EXPECT_EQ(n.options.key_prefix, "app:");
        EXPECT_EQ(n.options.command_timeout, std::chrono::milliseconds(50));
    }
    EXPECT_TRUE(parse_cluster_url("redis-cluster://a/0", {}).ok);
    EXPECT_NE(parse_cluster_url("redis-cluster://a/2", {}).error.find("only database 0"),
              std::string::npos);
    EXPECT_NE(parse_cluster_url("redis-cluster://a,,b", {}).error.find("empty server"),
              std::string::npos);
    EXPECT_NE(parse_cluster_url("redis-cluster://a?fencing=0", {}).error.find("fencing"),
              std::string::npos);
}

TEST(Url, SentinelUrlsNameTheSentinelsAndTheMaster) {
    auto r = parse_sentinel_url(
        "redis-sentinel://app:s3cret@10.0.0.1:26380,10.0.0.2,[::1]/my%20master/3"
        "?sentinel_password=watch&command_timeout=50ms&prefix=p:",
        {});
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.master_name, "my master");
    ASSERT_EQ(r.sentinels.size(), 3u);
    EXPECT_EQ(r.sentinels[0].host, "10.0.0.1");
    EXPECT_EQ(r.sentinels[0].port, 26380);
    EXPECT_EQ(r.sentinels[1].port, kSentinelPort);  // the sentinel default, not 6379
    EXPECT_EQ(r.sentinels[2].host, "::1");
    EXPECT_EQ(r.sentinels[2].port, kSentinelPort);
    // Sentinels get their own credentials and db 0; the master gets the URL's.
    EXPECT_EQ(r.sentinels[0].options.password, "watch");
    EXPECT_EQ(r.sentinels[0].redis.db, 0);
    EXPECT_EQ(r.sentinels[0].options.command_timeout, std::chrono::milliseconds(50));
    EXPECT_EQ(r.master.options.username, "app");
    EXPECT_EQ(r.master.options.password, "s3cret");
    EXPECT_EQ(r.master.redis.db, 3);
    EXPECT_EQ(r.master.options.key_prefix, "p:");

    EXPECT_NE(parse_sentinel_url("redis-sentinel://a,b", {}).error.find("name the master"),
              std::string::npos);
    EXPECT_NE(parse_sentinel_url("redis-sentinel://a,,b/m", {}).error.find("empty server"),
              std::string::npos);
    EXPECT_NE(parse_sentinel_url("redis://a/m", {}).error.find("expected redis-sentinel://"),
              std::string::npos);
    EXPECT_FALSE(parse_sentinel_url("redis-sentinel://a/m?nonsense=1", {}).ok);
    EXPECT_FALSE(parse_sentinel_url("redis-sentinel://a:notaport/m", {}).ok);
}

// Redis's own settings come from RedisOptions in ClientOptions::engine, and the URL's options
// win over them, even over a value that alone would be refused.
TEST(Url, RedisOptionsAreTheBaseAndTheUrlWins) {
    deadbolt::RedisOptions r;
    r.db = 4;
    r.sync_replicas = 1;
    r.command_connections = 0;  // refused alone
    deadbolt::ClientOptions o;
    o.engine = std::make_shared<deadbolt::RedisOptions>(r);
    auto bad = parse_url("redis://h", o);
    EXPECT_FALSE(bad.ok);
    EXPECT_NE(bad.error.find("command_connections must be at least 1"), std::string::npos)
        << bad.error;
    auto good = parse_url("redis://h/2?command_connections=2", o);
    ASSERT_TRUE(good.ok) << good.error;
    EXPECT_EQ(good.endpoint.redis.db, 2);
    EXPECT_EQ(good.endpoint.redis.sync_replicas, 1);
    EXPECT_EQ(good.endpoint.redis.command_connections, 2);
    EXPECT_NE(err("redis://h?command_connections=0").find("command_connections"),
              std::string::npos);
}
