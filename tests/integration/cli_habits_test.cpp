// What users of flock, consul, etcdctl and Redisson expect of the command line: --version,
// did-you-mean, bare seconds, run -c, -E, secrets out of argv, elect --observe.
#include <gtest/gtest.h>

#include <fstream>
#include <future>
#include <thread>

#include "cli_run.hpp"
#include "deadbolt/deadbolt.hpp"
#include "redis_server.hpp"

using namespace std::chrono_literals;
using deadbolt::test::RedisServer;

using deadbolt::test::CliResult;

namespace {

CliResult cli(const std::string& url, std::vector<std::string> args,
              std::vector<std::string> env = {}) {
    return deadbolt::test::run_cli(url, std::move(args), std::move(env));
}

}  // namespace

// The CLI loads an engine's library when a URL needs it: --version loads none, and a Redis URL
// loads Redis alone, not gRPC and the other engines (cli/engines.cpp).
TEST(CliHabits, VersionLoadsNoEngineAndARedisUrlLoadsRedisAlone) {
    RedisServer srv;
    auto loaded = [](const std::string& out, const std::string& lib) {
        return out.find("file=" + lib) != std::string::npos;
    };
#ifndef DEADBOLT_CLI_LOADS_ENGINES
    GTEST_SKIP() << "a static or sanitizer build: every engine is linked into the CLI";
#endif
    auto v = cli(srv.url(), {"--version"}, {"LD_DEBUG=files"});
    ASSERT_TRUE(loaded(v.out, "libdeadbolt_core")) << v.out;
    EXPECT_FALSE(loaded(v.out, "libdeadbolt_redis")) << v.out;
    auto s = cli(srv.url(), {"status", "x"}, {"LD_DEBUG=files"});
    EXPECT_EQ(s.rc, 1) << s.out;
    EXPECT_TRUE(loaded(s.out, "libdeadbolt_redis")) << s.out;
    for (const char* other : {"libdeadbolt_etcd", "libgrpc", "libdeadbolt_zookeeper",
                              "libdeadbolt_postgres", "libdeadbolt_mariadb"})
        EXPECT_FALSE(loaded(s.out, other)) << other;
    auto help = cli(srv.url(), {"status", "--help"});
    EXPECT_NE(help.out.find("redis://"), std::string::npos) << help.out;
}

TEST(CliHabits, VersionAndDidYouMean) {
    RedisServer srv;
    auto v = cli(srv.url(), {"--version"});
    EXPECT_EQ(v.rc, 0);
    EXPECT_EQ(v.out, "deadbolt 0.1.0\n");
    auto typo = cli(srv.url(), {"rnu", "x", "--", "true"});
    EXPECT_EQ(typo.rc, 64);
    EXPECT_NE(typo.out.find("did you mean 'run'?"), std::string::npos) << typo.out;
    auto option = cli(srv.url(), {"run", "--tll", "3s", "x", "--", "true"});
    EXPECT_EQ(option.rc, 64);
    EXPECT_NE(option.out.find("did you mean '--ttl'?"), std::string::npos) << option.out;
}

TEST(CliHabits, RunDashCAndAConflictExitCodeOfOnesOwn) {
    RedisServer srv;
    auto r = cli(srv.url(), {"run", "-c", "echo held $DEADBOLT_NAME", "job"});
    EXPECT_EQ(r.rc, 0) << r.out;
    EXPECT_EQ(r.out, "held job\n");
    EXPECT_EQ(cli(srv.url(), {"run", "-c", "true", "job", "--", "true"}).rc, 64);  // both
    EXPECT_EQ(cli(srv.url(), {"run", "job"}).rc, 64);                              // neither
    srv.raw().cmd({"SET", "busy", "someone", "PX", "60000"});
    EXPECT_EQ(cli(srv.url(), {"run", "--no-wait", "-E", "3", "busy", "--", "true"}).rc, 3);
    EXPECT_EQ(cli(srv.url(), {"run", "--no-wait", "busy", "--", "true"}).rc, 75);
}

TEST(CliHabits, ThePasswordStaysOutOfArgvAndOutOfTheCommand) {
    RedisServer srv({"--requirepass", "s3cret"});
    EXPECT_EQ(cli(srv.url(), {"run", "job", "--", "true"}).rc, 69);  // no password: refused
    auto env = cli(srv.url(), {"run", "-c", "echo [$DEADBOLT_PASSWORD]", "job"},
                   {"DEADBOLT_PASSWORD=s3cret"});
    EXPECT_EQ(env.rc, 0) << env.out;
    EXPECT_EQ(env.out, "[]\n");  // the command does not inherit it
    std::string file = srv.dir() + "/pw";
    std::ofstream(file) << "s3cret\n";
    EXPECT_EQ(cli(srv.url(), {"run", "--password-file", file, "job", "--", "true"}).rc, 0);
    auto missing = cli(srv.url(), {"run", "--password-file", file + ".nope", "job", "--", "true"});
    EXPECT_EQ(missing.rc, 64);
    EXPECT_NE(missing.out.find("--password-file"), std::string::npos) << missing.out;
}

TEST(CliHabits, ElectObservePrintsTheLeaderAndEveryChange) {
    RedisServer srv;
    auto watch = std::async(std::launch::async, [&] {
        std::string out;
        deadbolt::test::run_command({"timeout", "3", DEADBOLT_CLI, "elect", "--observe", "sched"},
                                    &out, {"DEADBOLT_URL=" + srv.url()});
        return out;
    });
    std::this_thread::sleep_for(500ms);
    auto c = deadbolt::Client::connect(srv.url());
    auto e = c.election("sched");
    const auto term = e.campaign("node-a").fence();
    std::this_thread::sleep_for(300ms);
    e.proclaim("node-a:9090");
    std::this_thread::sleep_for(300ms);
    e.resign();
    auto out = watch.get();
    auto at = [&](const std::string& s, std::size_t from) { return out.find(s, from); };
    auto a = at("sched: no leader", 0);
    auto b = at("sched: leader 'node-a' (term " + std::to_string(term) + ")", a);
    auto c2 = at("sched: leader 'node-a:9090'", b);
    auto d = at("sched: no leader", c2);
    EXPECT_NE(d, std::string::npos) << out;
}

TEST(CliHabits, ForceUnlockFreesTheNameWakesAWaiterAndTheEvictedHolderExits70) {
    RedisServer srv;
    auto holder = std::async(std::launch::async, [&] {
        return cli(srv.url(), {"run", "--ttl", "3s", "job", "--", "sleep", "30"});
    });
    auto c = deadbolt::Client::connect(srv.url());
    for (int i = 0; i < 500 && !c.status("job").held; ++i) std::this_thread::sleep_for(10ms);
    const auto evicted_fence = c.status("job").last_fence;
    ASSERT_GT(evicted_fence, 0u);
    auto waiter = std::async(std::launch::async, [&] {
        return cli(srv.url(), {"run", "--wait", "20s", "-c", "echo $DEADBOLT_FENCE", "job"});
    });
    std::this_thread::sleep_for(300ms);
    auto freed = cli(srv.url(), {"force-unlock", "job"});
    EXPECT_EQ(freed.rc, 0) << freed.out;
    EXPECT_EQ(freed.out, "job: freed (it was held as mutex)\n");
    auto w = waiter.get();  // woken by the release message: the holder renews and never expires
    EXPECT_EQ(w.rc, 0) << w.out;
    EXPECT_GT(std::stoull(w.out), evicted_fence);
    auto h = holder.get();
    EXPECT_EQ(h.rc, 70) << h.out;
    EXPECT_NE(h.out.find("lost"), std::string::npos) << h.out;
    EXPECT_EQ(cli(srv.url(), {"force-unlock", "job"}).out, "job: was not held\n");
    ASSERT_TRUE(c.latch("gate").try_set_count(2));
    EXPECT_EQ(cli(srv.url(), {"force-unlock", "gate"}).rc, 69);  // not a lock: refused
}
