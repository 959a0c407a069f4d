// Issue 30 item 1: a lease lost to a restart is never silent, even when the only sign of it is
// a release whose reply was lost.
#include <signal.h>

#include "cli.hpp"
#include "deadbolt/deadbolt.hpp"
#include "redis_server.hpp"
#include "tcp_proxy.hpp"

namespace deadbolt::clitest {
namespace {

using namespace std::chrono_literals;

// The server forgot the lock (no persistence) while `run` held it, and another run took it:
// the first run's command did not run alone, and it must hear so (exit 70), not exit 0.
TEST(CliLostRelease, ARestartWithoutPersistenceIsALossAtRelease) {
    test::RedisServer srv;  // the fixture's servers keep nothing on disk
    auto first = deadbolt_async(srv.url(), {"run", "--ttl", "30s", "X", "--", "sleep", "3"});
    until_held(srv.url(), "X");
    srv.restart();
    auto second = deadbolt(srv.url(), {"run", "X", "--", "true"});
    EXPECT_EQ(second.rc, 0) << second.out;
    auto r = first.get();
    EXPECT_EQ(r.rc, 70);
    EXPECT_TRUE(says(r, {"lost"}));
}

// The release's reply is lost (the server stopped), then the server comes back without the
// lock: the background release learns it was not ours, and run says so.
TEST(CliLostRelease, AReleaseWhoseReplyWasLostFindsOutAfterTheServerAnswersAgain) {
    test::RedisServer srv;
    auto first = deadbolt_async(srv.url() + "?command_timeout=300ms",
                                {"run", "--ttl", "30s", "Y", "--", "sleep", "1"});
    until_held(srv.url(), "Y");
    srv.pause();  // the release is sent into a server that does not answer
    std::this_thread::sleep_for(1500ms);
    srv.restart();  // and it comes back having forgotten the lock
    auto r = first.get();
    EXPECT_EQ(r.rc, 70) << r.out;
    EXPECT_TRUE(says(r, {"outcome unknown", "asking again", "lost"}));
}

// The same with a server that kept the lock: the release never reached it (a proxy held it
// back until the client gave up), so the retried release finds it ours and frees it; the
// command's own exit code stands.
TEST(CliLostRelease, AReleaseWhoseReplyWasLostIsConfirmedWhenTheLockWasStillOurs) {
    test::RedisServer srv;
    test::TcpProxy proxy(srv.port());
    auto first = deadbolt_async(proxy.url() + "?command_timeout=300ms",
                                {"run", "--ttl", "30s", "Z", "--", "sh", "-c", "sleep 1; exit 3"});
    until_held(srv.url(), "Z");
    proxy.stall_requests(true);  // the release is held back, then dropped with its connection
    std::this_thread::sleep_for(1500ms);
    proxy.stall_requests(false);
    auto r = first.get();
    EXPECT_EQ(r.rc, 3) << r.out;
    EXPECT_TRUE(says(r, {"asking again"}));
    EXPECT_EQ(srv.raw().cmd({"EXISTS", "Z"}).integer, 0) << "released by the retry";
}

}  // namespace
}  // namespace deadbolt::clitest
