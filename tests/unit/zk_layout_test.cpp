// ZooKeeper's pure pieces: the URL, names as znode paths, and the line of contenders.
#include <gtest/gtest.h>

#include "backends/zookeeper/paths.hpp"
#include "backends/zookeeper/url.hpp"

using namespace deadbolt::detail;

TEST(ZkUrl, ServersChrootCredentialsAndOptions) {
    auto u = parse_zk_url("zk://ann:p%40ss@a:2182,[::1],b/app/locks?session_timeout=5s", {});
    ASSERT_TRUE(u.ok) << u.error;
    ASSERT_EQ(u.servers.size(), 3u);
    EXPECT_EQ(u.servers[0].port, 2182);
    EXPECT_EQ(u.servers[1].host, "::1");
    EXPECT_EQ(u.servers[2].port, kZkPort);
    EXPECT_EQ(u.chroot, "/app/locks");
    EXPECT_EQ(u.hosts(), "a:2182,[::1]:2181,b:2181/app/locks");
    EXPECT_EQ(u.options.username, "ann");
    EXPECT_EQ(u.options.password, "p@ss");
    EXPECT_EQ(u.session_timeout, std::chrono::seconds(5));
    EXPECT_EQ(parse_zk_url("zk://a/", {}).chroot, "");
}

TEST(ZkUrl, MistakesAreNamed) {
    auto why = [](std::string_view url) { return parse_zk_url(url, {}).error; };
    EXPECT_NE(why("zookeeper://a").find("expected zk://"), std::string::npos);
    EXPECT_NE(why("zk://a//b").find("empty part"), std::string::npos);
    EXPECT_NE(why("zk://a?prefix=x").find("chroot"), std::string::npos);
    EXPECT_NE(why("zk://a?nope=1").find("unknown ZooKeeper URL option 'nope'"), std::string::npos);
    EXPECT_NE(why("zk://ann@a").find("user and a password"), std::string::npos);
    EXPECT_NE(why("zk://a:0").find("1..65535"), std::string::npos);
    EXPECT_NE(why("zk://a?session_timeout=0s").find("greater than 0"), std::string::npos);
}

TEST(ZkUrl, NodesOfAUserAreItsAloneUnlessTheUrlSaysOpen) {
    EXPECT_EQ(parse_zk_url("zk://a", {}).acl, ZkAcl::open);
    EXPECT_EQ(parse_zk_url("zk://ann:pw@a", {}).acl, ZkAcl::creator);
    EXPECT_EQ(parse_zk_url("zk://a?user=ann&password=pw", {}).acl, ZkAcl::creator);
    EXPECT_EQ(parse_zk_url("zk://ann:pw@a?acl=open", {}).acl, ZkAcl::open);
    EXPECT_EQ(parse_zk_url("zk://ann:pw@a?acl=creator", {}).acl, ZkAcl::creator);
    auto alone = parse_zk_url("zk://a?acl=creator", {});
    EXPECT_FALSE(alone.ok);
    EXPECT_NE(alone.error.find("user"), std::string::npos) << alone.error;
    auto bad = parse_zk_url("zk://ann:pw@a?acl=world", {});
    EXPECT_FALSE(bad.ok);
    EXPECT_NE(bad.error.find("'creator'"), std::string::npos) << bad.error;
    EXPECT_NE(bad.error.find("'open'"), std::string::npos) << bad.error;
}

TEST(ZkPaths, NamesZooKeeperTakesKeepTheirTextOthersAreEscaped) {
    std::string why;
    EXPECT_EQ(znode_of("jobs/daily", why), "/jobs/daily");
    EXPECT_EQ(znode_of("заказ 7", why), "/заказ 7");
    EXPECT_EQ(znode_of(std::string("a\0b", 3), why), "/a%00b");
    EXPECT_EQ(znode_of("./..", why), "/%2E/%2E%2E");
    EXPECT_EQ(znode_of("50%", why), "/50%25");
    EXPECT_EQ(znode_of("\xff\xfe", why), "/%FF%FE");
    EXPECT_EQ(znode_of("\xc2\x80", why), "/%C2%80");  // U+0080: ZooKeeper refuses it
    for (const char* bad : {"", "/a", "a/", "a//b"}) {
        why.clear();
        EXPECT_EQ(znode_of(bad, why), "") << bad;
        EXPECT_NE(why.find("empty part"), std::string::npos) << bad;
    }
    for (std::string name : {"jobs/daily", "a%b/\x01", "./..", "\xff"})
        EXPECT_EQ(name_of_znode(znode_of(name, why)), name);
}

TEST(ZkPaths, TheLineCountsCuratorsAndKazoosContendersInSequenceOrder) {
    auto guid = new_guid();
    EXPECT_EQ(guid.size(), 36u);
    EXPECT_NE(guid, new_guid());
    auto ours = contender_prefix(guid) + "0000000007";
    auto line = in_line({ours, "f00d__lock__0000000003", "_c_x-lock-0000000011", "leases",
                         "junk-lock-12", "__lock__00000000x1"});
    ASSERT_EQ(line.size(), 3u);
    EXPECT_EQ(line[0].seq, 3);
    EXPECT_EQ(line[1].name, ours);
    EXPECT_EQ(line[2].seq, 11);
    EXPECT_EQ(find_own(line, guid), 1u);
    EXPECT_EQ(find_own(line, new_guid()), std::nullopt);
}

TEST(ZkPaths, ASemaphoresLeasesAreNamedAsCuratorsAndFoundByGuid) {
    auto guid = new_guid();
    EXPECT_EQ(contender_prefix(guid, Queues::lease), "_c_" + guid + "-lease-");
    auto line =
        in_line({"_c_x-lease-0000000009", contender_prefix(guid, Queues::lease) + "0000000010"});
    ASSERT_EQ(line.size(), 2u);
    EXPECT_EQ(line[1].seq, 10);
    EXPECT_EQ(find_own(line, guid), 1u);
    EXPECT_FALSE(is_reader(line[0].name));
}

TEST(ZkPaths, ReadersAndWritersQueueInOneLineAsCuratorsReadWriteLockNamesThem) {
    auto guid = new_guid();
    EXPECT_EQ(contender_prefix(guid, Queues::read), "_c_" + guid + "-__READ__");
    EXPECT_EQ(contender_prefix(guid, Queues::write), "_c_" + guid + "-__WRIT__");
    auto line =
        in_line({"_c_a-__WRIT__0000000002", "_c_b-__READ__0000000001", "k__rlock__0000000003",
                 contender_prefix(guid, Queues::read) + "0000000004"});
    ASSERT_EQ(line.size(), 4u);
    EXPECT_TRUE(is_reader(line[0].name));
    EXPECT_FALSE(is_reader(line[1].name));
    EXPECT_TRUE(is_reader(line[2].name));  // Kazoo's ReadLock
    EXPECT_EQ(find_own(line, guid), 3u);
}

TEST(ZkPaths, LeaderLatchCandidatesAreInLine) {
    auto guid = new_guid();
    EXPECT_EQ(contender_prefix(guid, Queues::latch), "_c_" + guid + "-latch-");
    auto line =
        in_line({contender_prefix(guid, Queues::latch) + "0000000002", "_c_x-latch-0000000001"});
    ASSERT_EQ(line.size(), 2u);
    EXPECT_EQ(find_own(line, guid), 1u);
}

TEST(ZkPaths, AHoldersNodeCarriesItsTokenAndItsSessionsTimeout) {
    const std::string token = "web-1:4242:" + std::string(32, 'a');
    auto data = holder_data(token, std::chrono::milliseconds(5000));
    EXPECT_EQ(data, token + " session_timeout=5000ms");
    auto d = parse_holder_data(data);
    EXPECT_EQ(d.token, token);
    EXPECT_EQ(d.session_timeout, std::chrono::milliseconds(5000));
    // An older deadbolt's token alone, or another tool's data: all token, no timeout.
    for (const std::string& other :
         {token, std::string("10.0.0.7"), std::string(""), std::string("x session_timeout=abcms"),
          std::string("x session_timeout=5")}) {
        auto o = parse_holder_data(other);
        EXPECT_EQ(o.token, other);
        EXPECT_EQ(o.session_timeout.count(), 0) << other;
    }
}

TEST(ZkPaths, AHolderIsDeadboltsByItsDataOrAToolsByItsNodesName) {
    const std::string token = "web-1:4242:" + std::string(32, 'b');
    auto ours = holder_of("_c_g-lock-0000000001", holder_data(token, std::chrono::seconds(5)));
    EXPECT_EQ(ours.who.host, "web-1");
    EXPECT_EQ(ours.who.pid, 4242);
    EXPECT_TRUE(ours.who.client.empty());
    EXPECT_EQ(ours.session_timeout, std::chrono::seconds(5));
    EXPECT_EQ(ours.who.ttl.count(), -1);
    auto reentrant = holder_of("_c_g-lock-0000000001", "2 " + token + ":7");
    EXPECT_EQ(reentrant.who.pid, 4242);
    EXPECT_TRUE(reentrant.who.client.empty());
    auto custom = holder_of("_c_g-lock-0000000001", "1 billing-owner");
    EXPECT_TRUE(custom.who.host.empty());
    EXPECT_TRUE(custom.who.client.empty()) << "deadbolt's, of an owner id that names no process";
    EXPECT_EQ(holder_of("0f3a__lock__0000000002", "").who.client, "Kazoo");
    EXPECT_EQ(holder_of("0f3a__rlock__0000000002", "me").who.client, "Kazoo");
    auto curator = holder_of("_c_g-lock-0000000003", "10.0.0.7");
    EXPECT_EQ(curator.who.client, "Curator");
    EXPECT_EQ(curator.session_timeout.count(), 0);
    EXPECT_TRUE(is_candidate("_c_g-latch-0000000004"));
    EXPECT_FALSE(is_candidate("_c_g-lock-0000000004"));
}
