// Issue 30 items 8 and 9: who connects (a user named in the URL, the password given apart), and
// how fast and how clearly a wrong address or a wrong engine's port is reported.
#include <cstdio>
#include <fstream>

#include "cli.hpp"
#include "eventually.hpp"
#include "redis_server.hpp"

namespace deadbolt::clitest {
namespace {

// Whether something listens on 127.0.0.1:port, asked of the kernel rather than by connecting
// (a connection would be one more accept for the listener to count).
bool listening(std::uint16_t port) {
    std::ifstream tcp("/proc/net/tcp");
    char local[16];
    std::snprintf(local, sizeof local, "0100007F:%04X", port);
    for (std::string line; std::getline(tcp, line);)
        if (line.find(local) != std::string::npos && line.find(" 0A ") != std::string::npos)
            return true;
    return false;
}

TEST(CliConnect, ALoneUserInTheUrlTakesThePasswordGivenApart) {
    test::RedisServer srv;
    srv.raw().cmd({"ACL", "SETUSER", "u1", "on", ">s3cret", "~*", "&*", "+@all"});
    srv.raw().cmd({"ACL", "SETUSER", "default", "off"});
    std::string url = "redis://u1@127.0.0.1:" + std::to_string(srv.port());
    auto env = deadbolt(url, {"run", "job", "--", "true"}, {"DEADBOLT_PASSWORD=s3cret"});
    EXPECT_EQ(env.rc, 0) << env.out;
    auto file = ::testing::TempDir() + "/pw";
    ASSERT_EQ(test::run_command({"sh", "-c", "echo s3cret > " + file}), 0);
    auto f = deadbolt(url, {"run", "--password-file", file, "job", "--", "true"});
    EXPECT_EQ(f.rc, 0) << f.out;
    auto wrong = deadbolt(url, {"run", "job", "--", "true"}, {"DEADBOLT_PASSWORD=nope"});
    EXPECT_EQ(wrong.rc, 69) << wrong.out;
}

TEST(CliConnect, ARefusedPortFailsAtTheFirstRefusalNamingWhatWasTried) {
    auto port = std::to_string(test::free_port());  // nothing listens there
    auto r = deadbolt("redis://127.0.0.1:" + port, {"status", "x"});
    EXPECT_EQ(r.rc, 69);
    EXPECT_TRUE(says(r, {("127.0.0.1:" + port).c_str(), "refused"}));
}

TEST(CliConnect, APeerThatHangsUpOnPingIsNamedAsNotRedis) {
    // A listener that reads the first bytes and closes, as etcd, PostgreSQL and ZooKeeper do
    // with a request in a protocol they do not speak. Counting its accepts shows no retry.
    auto port = test::free_port();
    auto listener = std::async(std::launch::async, [port] {
        std::string out;
        test::run_command(
            {"python3", "-c",
             "import socket,sys\n"
             "s=socket.socket(); s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n"
             "s.bind(('127.0.0.1'," +
                 std::to_string(port) +
                 ")); s.listen(8)\n"
                 "print('ready', flush=True)\n"
                 "s.settimeout(3); n=0\n"
                 "try:\n"
                 "  while True:\n"
                 "    c,_=s.accept(); n+=1; c.recv(64); c.close()\n"
                 "except OSError: pass\n"
                 "print('accepts', n)\n"},
            &out);
        return out;
    });
    ASSERT_TRUE(test::eventually([port] { return listening(port); }))
        << "the listener never started";
    auto r = deadbolt("redis://127.0.0.1:" + std::to_string(port), {"status", "x"});
    EXPECT_EQ(r.rc, 69);
    EXPECT_TRUE(says(r, {"does not speak Redis"}));
    EXPECT_TRUE(says({0, listener.get()}, {"accepts 1"}));
}

}  // namespace
}  // namespace deadbolt::clitest

namespace deadbolt::clitest {
namespace {

// "host:port" of the first server an engine's URL names.
std::string first_host_port(const std::string& url) {
    auto rest = url.substr(url.find("://") + 3);
    rest = rest.substr(0, rest.find_first_of("/?"));
    if (auto at = rest.rfind('@'); at != std::string::npos) rest = rest.substr(at + 1);
    return rest.substr(0, rest.find(','));
}

template <class E>
using RedisUrlAtAnotherEngine = EveryEngine<E>;

TYPED_TEST_SUITE(RedisUrlAtAnotherEngine, Engines, BackendName);

// The engine's own URL with its first server's address swapped for one nobody listens on.
std::string refused_url(const std::string& url) {
    auto begin = url.find(first_host_port(url));
    auto end = url.find_first_of("/?", begin);  // past every server of a list
    return url.substr(0, begin) + "127.0.0.1:" + std::to_string(test::free_port()) +
           (end == std::string::npos ? "" : url.substr(end));
}

TYPED_TEST(RedisUrlAtAnotherEngine, ARefusedPortFailsAtOnceNamingTheAddress) {
    if (serverless<TypeParam>()) GTEST_SKIP() << "no server: nothing to refuse a connection";
    auto url = refused_url(this->url());
    auto r = deadbolt(url, {"status", "x"});
    EXPECT_EQ(r.rc, 69) << url;
    EXPECT_TRUE(says(r, {first_host_port(url).c_str()}));
    EXPECT_EQ(r.out.find("ZOO_"), std::string::npos) << "a client library's log line: " << r.out;
}

TYPED_TEST(RedisUrlAtAnotherEngine, IsNamedAsNotRedisAtOnce) {
    if (std::string(TypeParam::kName) == "OneServer") GTEST_SKIP() << "Redis speaks Redis";
    if (serverless<TypeParam>()) GTEST_SKIP() << "no server: no port to point Redis at";
    auto r = deadbolt("redis://" + first_host_port(this->url()), {"status", "x"});
    EXPECT_EQ(r.rc, 69) << r.out;
    EXPECT_TRUE(says(r, {"Redis", "check the URL's scheme and port"}));
}

}  // namespace
}  // namespace deadbolt::clitest

namespace deadbolt::clitest {
namespace {

#ifdef DEADBOLT_TEST_ETCD
TEST(CliMessages, CredentialsForAnEtcdWithoutAuthAreARefusalNotAUsageError) {
    auto url = shared<Etcd>().url();
    auto r = deadbolt("etcd://root:bad@" + url.substr(7), {"status", "x"});
    EXPECT_EQ(r.rc, 69);
    EXPECT_TRUE(says(r, {"without authentication", "drop user:password"}));
}
#endif

TEST(CliMessages, AnUnknownSchemeListsEveryEngineThisBuildTakes) {
    auto r = deadbolt("memcache://127.0.0.1", {"status", "x"});
    EXPECT_EQ(r.rc, 64);
    EXPECT_TRUE(says(r, {"unknown URL scheme 'memcache'", "redis://", "redlock://"}));
#ifdef DEADBOLT_TEST_ETCD
    EXPECT_TRUE(says(r, {"etcd://"}));
#endif
#ifdef DEADBOLT_TEST_ZK
    EXPECT_TRUE(says(r, {"zk://"}));
#endif
#ifdef DEADBOLT_TEST_PG
    EXPECT_TRUE(says(r, {"postgresql://"}));
#endif
#ifdef DEADBOLT_TEST_MY
    EXPECT_TRUE(says(r, {"mysql://"}));
#endif
    auto help = deadbolt("redis://127.0.0.1", {"run", "--help"});
    EXPECT_TRUE(says(help, {"etcd://", "zk://", "postgresql://", "mysql://"}));
}

}  // namespace
}  // namespace deadbolt::clitest
