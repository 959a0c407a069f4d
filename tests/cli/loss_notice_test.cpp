// Issue 30 item 2 (Redis): `deadbolt run` hears of its lease's loss at once where the server
// can tell, and stops its command (exit 70). With --ttl 120s its first renewal would come
// after 40 s, past what these tests wait: hearing of it within the test is the behaviour.
#include <future>

#include "cli.hpp"
#include "deadbolt/deadbolt.hpp"
#include "eventually.hpp"
#include "redis_server.hpp"

namespace deadbolt::clitest {
namespace {

using namespace std::chrono_literals;

// Waits until run holds name and listens for what may take it away (its subscriber starts
// with the lease, in the background).
void until_held_and_listening(test::RedisServer& srv, const std::string& name,
                              const std::string& channel = "{deadbolt}:freed") {
    auto raw = srv.raw();
    ASSERT_TRUE(test::eventually([&] { return raw.cmd({"EXISTS", name}).integer == 1; }));
    ASSERT_TRUE(test::eventually([&] {
        return raw.cmd({"PUBSUB", "NUMSUB", channel}).elements.at(1).integer >= 1;
    }));
}

TEST(CliLossNotice, ForceUnlockStopsTheCommandAtOnce) {
    test::RedisServer srv;
    auto run = deadbolt_async(srv.url(), {"run", "--ttl", "120s", "job", "--", "sleep", "60"});
    until_held_and_listening(srv, "job");
    auto r = deadbolt(srv.url(), {"force-unlock", "job"});
    EXPECT_EQ(r.rc, 0) << r.out;
    ASSERT_EQ(run.wait_for(30s), std::future_status::ready)
        << "run kept its command going on a force-unlocked lease";
    auto done = run.get();
    EXPECT_EQ(done.rc, 70) << done.out;
    EXPECT_TRUE(says(done, {"lost"}));
}

TEST(CliLossNotice, ADeletedKeyStopsTheCommandWhenTheServerSendsKeyspaceEvents) {
    test::RedisServer srv({"--notify-keyspace-events", "Kg"});
    auto run = deadbolt_async(srv.url(), {"run", "--ttl", "120s", "data", "--", "sleep", "60"});
    until_held_and_listening(srv, "data", "__keyspace@0__:data");
    srv.raw().cmd({"DEL", "data"});
    ASSERT_EQ(run.wait_for(30s), std::future_status::ready)
        << "run kept its command going after its key was deleted";
    auto done = run.get();
    EXPECT_EQ(done.rc, 70) << done.out;
}

TEST(CliLossNotice, ARestartWithoutPersistenceStopsTheCommandAtOnce) {
    test::RedisServer srv;  // the fixture's servers keep nothing on disk
    auto run = deadbolt_async(srv.url(), {"run", "--ttl", "120s", "gone", "--", "sleep", "60"});
    until_held_and_listening(srv, "gone");
    srv.restart();
    ASSERT_EQ(run.wait_for(30s), std::future_status::ready)
        << "run kept its command going on a lease the restarted server forgot";
    auto done = run.get();
    EXPECT_EQ(done.rc, 70) << done.out;
}

}  // namespace
}  // namespace deadbolt::clitest
