// The deadbolt CLI: run/status/throttle/fenced-set and their exit codes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <future>
#include <sstream>
#include <thread>

#include "cli_run.hpp"
#include "deadbolt/deadbolt.hpp"
#include "eventually.hpp"
#include "redis_cluster.hpp"
#include "redis_server.hpp"

using namespace std::chrono_literals;
using deadbolt::test::RedisServer;
using Clock = std::chrono::steady_clock;

using deadbolt::test::CliResult;

namespace {

CliResult cli(const RedisServer& srv, std::vector<std::string> args) {
    return deadbolt::test::run_cli(srv.url(), std::move(args));
}

}  // namespace

TEST(Cli, RunPassesLeaseInEnvironmentAndExitCode) {
    RedisServer srv;
    auto r = cli(srv, {"run", "job", "--", "sh", "-c",
                       "echo $DEADBOLT_NAME $DEADBOLT_FENCE $DEADBOLT_TOKEN; exit 3"});
    EXPECT_EQ(r.rc, 3) << r.out;
    std::string name, fence, token;
    std::istringstream(r.out) >> name >> fence >> token;
    EXPECT_EQ(name, "job");
    EXPECT_GT(std::stoull(fence), 0u);
    // host:pid: and 128 random bits
    auto random = token.substr(token.rfind(':') + 1);
    EXPECT_EQ(random.size(), 32u) << token;
    EXPECT_EQ(random.find_first_not_of("0123456789abcdef"), std::string::npos) << token;
    EXPECT_EQ(srv.raw().cmd({"EXISTS", "job"}).integer, 0);  // released after the child
    auto s = cli(srv, {"status", "--json", "job"});
    EXPECT_EQ(s.rc, 1) << "free";
    EXPECT_NE(s.out.find("\"held\":false"), std::string::npos) << s.out;
    EXPECT_NE(s.out.find("\"last_fence\":" + fence), std::string::npos) << s.out;
}

TEST(Cli, RunsCommandHoldsNoneOfDeadboltsConnections) {
    RedisServer srv;
    // The same count of open sockets as a command started without deadbolt: run's
    // connections to the server (the lock's, the renewer's) are not the command's to keep.
    // ls lists its own table (it inherited the shell's sockets): the shell's own changes while
    // it sets up the pipe, and ls once saw an fd there vanish between reading and stat.
    std::string count = "ls -l /proc/self/fd | grep -c socket:";
    std::string without;
    deadbolt::test::run_command({"sh", "-c", count}, &without);
    auto with = cli(srv, {"run", "fds", "--", "sh", "-c", count});
    EXPECT_EQ(with.out, without) << "a socket of deadbolt's leaked into the command";
}

TEST(Cli, HeldLockGivesExit75WithNoWaitOrAfterWait) {
    RedisServer srv;
    srv.raw().cmd({"SET", "busy", "someone", "PX", "60000"});
    auto r = cli(srv, {"run", "--no-wait", "busy", "--", "true"});
    EXPECT_EQ(r.rc, 75) << r.out;
    EXPECT_NE(r.out.find("held by a client deadbolt did not write"), std::string::npos) << r.out;
    auto t0 = Clock::now();
    r = cli(srv, {"run", "--wait", "300ms", "busy", "--", "true"});
    EXPECT_EQ(r.rc, 75);
    EXPECT_GE(Clock::now() - t0, 300ms);
    auto s = cli(srv, {"status", "busy"});
    EXPECT_NE(s.out.find("held, expires in"), std::string::npos) << s.out;
    EXPECT_EQ(srv.raw().cmd({"GET", "busy"}).str, "someone");
}

TEST(Cli, RunWaitsForTheHolderToFinish) {
    RedisServer srv;
    auto first = std::async(std::launch::async, [&] {
        return cli(srv, {"run", "q", "--", "sleep", "0.5"});
    });
    std::this_thread::sleep_for(150ms);
    auto second = cli(srv, {"run", "--wait", "20s", "q", "--", "echo", "second"});
    EXPECT_EQ(second.rc, 0) << second.out;
    EXPECT_NE(second.out.find("second"), std::string::npos);
    EXPECT_EQ(first.get().rc, 0);
}

TEST(Cli, LostLeaseStopsTheChildAndExits70) {
    RedisServer srv;
    auto t0 = Clock::now();
    // The child ignores SIGTERM, so deadbolt must escalate to SIGKILL after the grace period.
    auto run = std::async(std::launch::async, [&] {
        return cli(srv, {"run", "--ttl", "900ms", "--kill-grace", "300ms", "victim", "--", "sh",
                         "-c", "trap '' TERM; sleep 30"});
    });
    auto until = Clock::now() + 5s;
    while (srv.raw().cmd({"EXISTS", "victim"}).integer == 0 && Clock::now() < until)
        std::this_thread::sleep_for(10ms);
    srv.raw().cmd({"DEL", "victim"});
    auto r = run.get();
    EXPECT_EQ(r.rc, 70) << r.out;
    EXPECT_NE(r.out.find("lost"), std::string::npos) << r.out;
    EXPECT_LT(Clock::now() - t0, 10s);  // not the child's 30 s
}

TEST(Cli, SignalsAreForwardedToTheChild) {
    RedisServer srv;
    // timeout(1) sends SIGTERM to deadbolt after 1 s; the child's TERM trap exits 7.
    auto r = deadbolt::test::run_command(
        {"timeout", "--preserve-status", "-s", "TERM", "1", DEADBOLT_CLI, "run", "sig", "--", "sh",
         "-c", "trap 'echo got-term; exit 7' TERM; sleep 30 & wait"},
        nullptr, {"DEADBOLT_URL=" + srv.url()});
    EXPECT_EQ(r, 7);
    EXPECT_EQ(srv.raw().cmd({"EXISTS", "sig"}).integer, 0);
}

TEST(Cli, UsageServerAndExecErrors) {
    RedisServer srv;
    EXPECT_EQ(cli(srv, {}).rc, 64);
    EXPECT_EQ(cli(srv, {"run", "x"}).rc, 64);  // no command
    auto bad = cli(srv, {"run", "--ttl", "30y", "x", "--", "true"});
    EXPECT_EQ(bad.rc, 64);
    EXPECT_NE(bad.out.find("unknown unit 'y'"), std::string::npos) << bad.out;
    EXPECT_EQ(cli(srv, {"run", "--ttl", "0s", "x", "--", "true"}).rc, 64);
    EXPECT_EQ(cli(srv, {"run", "--url", "nope://x", "x", "--", "true"}).rc, 64);
    auto down = cli(srv, {"run", "--url",
                          "redis://127.0.0.1:" + std::to_string(deadbolt::test::free_port()) +
                              "?connect_timeout=200ms&command_timeout=200ms",
                          "x", "--", "true"});
    EXPECT_EQ(down.rc, 69) << down.out;
    EXPECT_EQ(srv.raw().cmd({"DBSIZE"}).integer, 0);  // no failure above wrote anything
    EXPECT_EQ(cli(srv, {"run", "x", "--", "/definitely/not/here"}).rc, 127);
    std::string plain = srv.dir() + "/not-executable";
    deadbolt::test::run_command({"sh", "-c", "echo data > " + plain + "; chmod 644 " + plain});
    EXPECT_EQ(cli(srv, {"run", "x", "--", plain}).rc, 126);
    EXPECT_EQ(srv.raw().cmd({"EXISTS", "x"}).integer, 0);
    // flock's habit: a bare number is seconds; fractions work.
    EXPECT_EQ(cli(srv, {"run", "--ttl", "30", "--wait", "1.5", "x", "--", "true"}).rc, 0);
    EXPECT_EQ(cli(srv, {"run", "--ttl", "2.5s", "x", "--", "true"}).rc, 0);
    auto help = cli(srv, {"run", "--help"});
    EXPECT_EQ(help.rc, 0);
    EXPECT_NE(help.out.find("Examples"), std::string::npos);
}

TEST(Cli, Throttle) {
    RedisServer srv;
    EXPECT_EQ(cli(srv, {"throttle", "--window", "400ms", "submit:u1"}).rc, 0);
    auto again = cli(srv, {"throttle", "--window", "400ms", "submit:u1"});
    EXPECT_EQ(again.rc, 75);
    EXPECT_NE(again.out.find("try again in"), std::string::npos) << again.out;
    EXPECT_EQ(cli(srv, {"throttle", "--window", "400ms", "submit:u2"}).rc, 0);
    std::this_thread::sleep_for(450ms);
    EXPECT_EQ(cli(srv, {"throttle", "--window", "400ms", "submit:u1"}).rc, 0);
    EXPECT_EQ(cli(srv, {"throttle", "submit:u1"}).rc, 64);  // --window required
    // A burst of 3: three uses at once, the fourth refused; another burst size on the same
    // key is a usage error, not a silent change of rate.
    for (int i = 0; i < 3; ++i)
        EXPECT_EQ(cli(srv, {"throttle", "--window", "1m", "--burst", "3", "api"}).rc, 0) << i;
    EXPECT_EQ(cli(srv, {"throttle", "--window", "1m", "--burst", "3", "api"}).rc, 75);
    auto other = cli(srv, {"throttle", "--window", "1m", "--burst", "4", "api"});
    EXPECT_EQ(other.rc, 64) << other.out;
    EXPECT_NE(other.out.find("must agree"), std::string::npos) << other.out;
    EXPECT_EQ(cli(srv, {"throttle", "--window", "1m", "--burst", "0", "api2"}).rc, 64);
}

TEST(Cli, FencedSetRefusesAnOlderFence) {
    RedisServer srv;
    EXPECT_EQ(cli(srv, {"fenced-set", "--fence", "10", "row", "new"}).rc, 0);
    auto stale = cli(srv, {"fenced-set", "--fence", "9", "row", "old"});
    EXPECT_EQ(stale.rc, 65);
    EXPECT_NE(stale.out.find("refused"), std::string::npos);
    EXPECT_EQ(srv.raw().cmd({"GET", "row"}).str, "new");
}

TEST(Cli, RunWithWaitRidesOutAServerThatIsDownOrRestarting) {
    RedisServer srv;
    srv.stop();
    auto run = std::async(std::launch::async, [&] {
        return cli(srv, {"run", "--wait", "30s", "blip", "--", "echo", "ran"});
    });
    std::this_thread::sleep_for(1500ms);  // once, deadbolt gave up here with exit 69
    srv.start();
    auto r = run.get();
    EXPECT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("ran"), std::string::npos) << r.out;
    // Without --wait, a dead server is an error at once.
    srv.stop();
    EXPECT_EQ(cli(srv, {"run", "blip", "--", "true"}).rc, 69);
}

TEST(Cli, OneNameIsOneKindAsFlockUsersExpect) {
    RedisServer srv;
    auto c = deadbolt::Client::connect(srv.url());
    // A reader holds "mix": the exclusive run waits (here: fails at once) instead of running X.
    auto reader = c.acquire("mix", deadbolt::LockMode::shared, {});
    auto x = cli(srv, {"run", "--no-wait", "mix", "--", "echo", "X"});
    EXPECT_EQ(x.rc, 75) << x.out;
    EXPECT_EQ(x.out.find("X\n"), std::string::npos) << x.out;
    // A semaphore's name is refused for a lock, with the kind in place and no advice to delete.
    auto permit = c.permit_semaphore("slots", 2).acquire();
    auto r = cli(srv, {"run", "--no-wait", "slots", "--", "true"});
    EXPECT_EQ(r.rc, 69) << r.out;
    EXPECT_NE(r.out.find("holds a Semaphore"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("delete"), std::string::npos) << r.out;
}

TEST(Cli, FencedGetAndSetIfVersionMakeAReadModifyWriteForTheShell) {
    RedisServer srv;
    auto sh = [&](const std::string& script) {
        std::string out;
        int rc = deadbolt::test::run_command(
            {"sh", "-c", script}, &out,
            {"DEADBOLT_URL=" + srv.url(), "D=" + std::string(DEADBOLT_CLI)});
        return CliResult{rc, out};
    };
    srv.raw().cmd({"SET", "n", "it's 41"});
    auto r = sh("eval \"$($D fenced-get n)\"; echo \"[$DEADBOLT_VERSION] [$DEADBOLT_VALUE]\"");
    EXPECT_EQ(r.out, "[0] [it's 41]\n") << r.out;
    EXPECT_EQ(sh("$D fenced-set --fence 7 --if-version 0 n 42").rc, 0);
    auto stale = sh("$D fenced-set --fence 8 --if-version 0 n 43");
    EXPECT_EQ(stale.rc, 65);
    EXPECT_NE(stale.out.find("changed since version 0 (now 1)"), std::string::npos) << stale.out;
    EXPECT_EQ(sh("$D fenced-set --fence 8 --if-version x n 43").rc, 64);
    EXPECT_EQ(srv.raw().cmd({"GET", "n"}).str, "42");
}

TEST(Cli, FencedSetTakesOnlyFencesDeadboltIssues) {
    RedisServer srv;
    // Each would once have been read as some number and written (a clamped 2^64-1 would then
    // refuse every legitimate write to row forever).
    for (const char* bad : {"99999999999999999999999", "", "0x10", "-1", "+7", "0", "1e3"}) {
        auto r = cli(srv, {"fenced-set", "--fence", bad, "row", "x"});
        EXPECT_EQ(r.rc, 64) << bad << ": " << r.out;
        EXPECT_NE(r.out.find("--fence"), std::string::npos) << r.out;
        EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << "one line: " << r.out;
    }
    EXPECT_EQ(srv.raw().cmd({"EXISTS", "row"}).integer, 0);
    EXPECT_EQ(srv.raw().cmd({"EXISTS", "{row}:deadbolt-fence"}).integer, 0);
    EXPECT_EQ(cli(srv, {"fenced-set", "--fence", "9007199254740991", "row", "x"}).rc, 0);
}

TEST(Cli, OnATerminalTheCommandReadsItAndWaitingShowsALiveLine) {
    RedisServer srv;
    // script(1) gives deadbolt a pseudo-terminal as stdin/stderr.
    auto on_tty = [&](const std::string& args) {
        std::string out;
        int rc = deadbolt::test::run_command(
            {"sh", "-c",
             "(sleep 1; printf 'hello\\n') | script -qec \"DEADBOLT_URL=" + srv.url() + " " +
                 DEADBOLT_CLI + " " + args + "\" /dev/null"},
            &out);
        return CliResult{rc, out};
    };
    // The command's process group owns the terminal: it can read it without being stopped.
    auto r = on_tty("run tty-job -- sh -c 'read x; echo got:\\$x'");  // \$: for the outer sh
    EXPECT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("got:hello"), std::string::npos) << r.out;
    // While waiting on a terminal, one live line names the lock and the holder's TTL.
    srv.raw().cmd({"SET", "tty-busy", "someone", "PX", "60000"});
    r = on_tty("run --wait 700ms tty-busy -- true");
    EXPECT_EQ(r.rc, 75) << r.out;
    EXPECT_NE(r.out.find("waiting for 'tty-busy'"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("holder's lease ends in"), std::string::npos) << r.out;
    // Not a terminal: quiet.
    auto quiet = cli(srv, {"run", "--wait", "300ms", "tty-busy", "--", "true"});
    EXPECT_EQ(quiet.out.find("waiting for"), std::string::npos) << quiet.out;
}

TEST(Cli, RunPermitsLetsNCommandsRunAtOnceAndNoMore) {
    RedisServer srv;
    std::vector<std::future<CliResult>> holders;
    for (int i = 0; i < 2; ++i)
        holders.push_back(std::async(std::launch::async, [&] {
            return cli(srv, {"run", "--permits", "2", "pool", "--", "sleep", "1.5"});
        }));
    auto raw = srv.raw();
    for (auto until = Clock::now() + 10s;
         Clock::now() < until && raw.cmd({"ZCARD", "pool"}).integer < 2;)
        std::this_thread::sleep_for(10ms);
    auto s = cli(srv, {"status", "pool"});
    EXPECT_NE(s.out.find("2 of 2 permits in use"), std::string::npos) << s.out;
    auto third = cli(srv, {"run", "--permits", "2", "--no-wait", "pool", "--", "true"});
    EXPECT_EQ(third.rc, 75) << third.out;
    for (auto& h : holders) EXPECT_EQ(h.get().rc, 0);
    EXPECT_EQ(cli(srv, {"run", "--permits", "2", "--no-wait", "pool", "--", "true"}).rc, 0);
    EXPECT_NE(cli(srv, {"run", "--permits", "0", "pool", "--", "true"}).rc, 0);
}

TEST(Cli, RunSharedAdmitsReadersTogetherAndKeepsTheWriterOut) {
    RedisServer srv;
    auto reader = std::async(std::launch::async, [&] {
        return cli(srv, {"run", "--shared", "catalog", "--", "sleep", "1.5"});
    });
    auto raw = srv.raw();
    for (auto until = Clock::now() + 10s;
         Clock::now() < until && raw.cmd({"ZCARD", "{catalog}:readers"}).integer < 1;)
        std::this_thread::sleep_for(10ms);
    EXPECT_EQ(cli(srv, {"run", "--shared", "--no-wait", "catalog", "--", "true"}).rc, 0);
    auto s = cli(srv, {"status", "catalog"});
    EXPECT_NE(s.out.find("read by 1"), std::string::npos) << s.out;
    auto w = cli(srv, {"run", "--write", "--no-wait", "catalog", "--", "true"});
    EXPECT_EQ(w.rc, 75) << w.out;
    EXPECT_EQ(reader.get().rc, 0);
    EXPECT_EQ(cli(srv, {"run", "--write", "--no-wait", "catalog", "--", "true"}).rc, 0);
    EXPECT_EQ(cli(srv, {"run", "--fair", "--no-wait", "catalog", "--", "true"}).rc, 0);
}

TEST(Cli, ElectRunsTheCommandOnlyWhileLeaderAndStopsItOnLoss) {
    RedisServer srv;
    auto leader = std::async(std::launch::async, [&] {
        return cli(srv, {"elect", "--value", "10.0.0.7:80", "svc", "--", "sh", "-c",
                         "test \"$DEADBOLT_FENCE\" -gt 0 && sleep 1.5"});
    });
    auto raw = srv.raw();
    for (auto until = Clock::now() + 10s;
         Clock::now() < until && raw.cmd({"EXISTS", "svc"}).integer == 0;)
        std::this_thread::sleep_for(10ms);
    EXPECT_EQ(raw.cmd({"HGET", "svc", "value"}).str, "10.0.0.7:80");
    auto s = cli(srv, {"status", "svc"});
    EXPECT_NE(s.out.find("leader"), std::string::npos) << s.out;
    auto second = cli(srv, {"elect", "--no-wait", "svc", "--", "true"});
    EXPECT_EQ(second.rc, 75) << second.out;
    EXPECT_EQ(leader.get().rc, 0);
    EXPECT_EQ(raw.cmd({"EXISTS", "svc"}).integer, 0) << "the leader did not resign";
    EXPECT_EQ(cli(srv, {"elect", "--no-wait", "svc", "--", "true"}).rc, 0);

    auto deposed = std::async(std::launch::async, [&] {
        return cli(
            srv, {"elect", "--ttl", "900ms", "--kill-grace", "300ms", "svc", "--", "sleep", "30"});
    });
    for (auto until = Clock::now() + 10s;
         Clock::now() < until && raw.cmd({"EXISTS", "svc"}).integer == 0;)
        std::this_thread::sleep_for(10ms);
    raw.cmd({"HSET", "svc", "leader", "usurper"});
    auto r = deposed.get();
    EXPECT_EQ(r.rc, 70) << r.out;
}

TEST(Cli, RunOverRedlockHoldsAMajorityAndWarnsOfAnEvenCount) {
    RedisServer a, b, c, d;
    auto url = [](std::initializer_list<const RedisServer*> nodes) {
        std::string u = "redlock://";
        for (auto* s : nodes)
            u += (u.size() > 10 ? "," : "") + std::string("127.0.0.1:") + std::to_string(s->port());
        return u;
    };
    std::vector<std::string> run = {
        DEADBOLT_CLI, "run",       "--url", url({&a, &b, &c}),        "job",
        "--",         "redis-cli", "-p",    std::to_string(b.port()), "GET",
        "job"};
    std::string out;
    EXPECT_EQ(deadbolt::test::run_command(run, &out), 0) << out;
    // The token (host:pid: and 32 hex digits), held on node b while the command ran.
    EXPECT_EQ(out.rfind(':'), out.size() - 34) << out;
    // Released everywhere after (the release returned once a majority took it).
    EXPECT_TRUE(deadbolt::test::eventually([&] {
        return a.raw().cmd({"EXISTS", "job"}).integer == 0;
    }));
    run[3] = url({&a, &b, &c, &d});
    run[5] = "--";
    run.resize(6);
    run.push_back("true");
    EXPECT_EQ(deadbolt::test::run_command(run, &out), 0) << out;
    EXPECT_NE(out.find("warning: redlock with 4 nodes"), std::string::npos) << out;
}

TEST(Cli, RunAndStatusOverACluster) {
    deadbolt::test::RedisCluster cluster;
    auto m = cluster.master_of("job");
    std::vector<std::string> run = {DEADBOLT_CLI,  "run", "--url",
                                    cluster.url(), "job", "--",
                                    "redis-cli",   "-p",  std::to_string(cluster.node(m).port()),
                                    "GET",         "job"};
    std::string out;
    EXPECT_EQ(deadbolt::test::run_command(run, &out), 0) << out;
    // The token, on the master of job's slot: host:pid: and 32 hex digits.
    EXPECT_GT(out.size(), 33u) << out;
    EXPECT_EQ(out.rfind(':'), out.size() - 34) << out;
    EXPECT_EQ(cluster.node(m).raw().cmd({"EXISTS", "job"}).integer, 0);  // released after
    EXPECT_EQ(
        deadbolt::test::run_command({DEADBOLT_CLI, "status", "--url", cluster.url(), "job"}, &out),
        1)
        << out;
    EXPECT_NE(out.find("free"), std::string::npos) << out;
}

TEST(Cli, StatusNamesTheHolderAndExitsOneWhenFreeAndListShowsHeldLocks) {
    RedisServer srv;
    auto holder = std::async(std::launch::async, [&] {
        return cli(srv, {"run", "job", "--", "sleep", "2"});
    });
    auto raw = srv.raw();
    for (auto until = Clock::now() + 10s;
         Clock::now() < until && raw.cmd({"EXISTS", "job"}).integer == 0;)
        std::this_thread::sleep_for(10ms);
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    // The holder is the `deadbolt run` process, not this test.
    auto s = cli(srv, {"status", "job"});
    EXPECT_EQ(s.rc, 0) << s.out;
    EXPECT_NE(s.out.find(std::string("held by ") + host + " pid "), std::string::npos) << s.out;
    EXPECT_NE(s.out.find(" UTC ("), std::string::npos) << s.out;
    EXPECT_EQ(s.out.find(" pid " + std::to_string(getpid()) + ","), std::string::npos) << s.out;
    auto j = cli(srv, {"status", "--json", "job"});
    EXPECT_NE(j.out.find(std::string("\"held_by\":[{\"host\":\"") + host + "\",\"pid\":"),
              std::string::npos)
        << j.out;
    EXPECT_NE(j.out.find("\"since\":\"20"), std::string::npos) << j.out;
    auto q = cli(srv, {"status", "-q", "job"});
    EXPECT_EQ(q.rc, 0);
    EXPECT_EQ(q.out, "");

    auto l = cli(srv, {"list"});
    EXPECT_EQ(l.rc, 0) << l.out;
    EXPECT_EQ(l.out.rfind("NAME ", 0), 0u) << l.out;
    EXPECT_NE(l.out.find("\njob "), std::string::npos) << l.out;
    EXPECT_NE(l.out.find(" mutex "), std::string::npos) << l.out;
    auto lj = cli(srv, {"list", "--json", "j*"});
    EXPECT_EQ(lj.out.rfind("[{", 0), 0u) << lj.out;
    EXPECT_NE(lj.out.find("\"name\":\"job\""), std::string::npos) << lj.out;
    EXPECT_EQ(cli(srv, {"list", "x*"}).rc, 1) << "nothing matched";

    EXPECT_EQ(holder.get().rc, 0);
    auto free = cli(srv, {"status", "-q", "job"});
    EXPECT_EQ(free.rc, 1);
    EXPECT_EQ(free.out, "");
    EXPECT_EQ(cli(srv, {"status", "job"}).rc, 1);
}
