// Issue 30 item 7: force-unlock frees locks, never a user's data that sits under the name.
#include "cli.hpp"
#include "redis_server.hpp"

namespace deadbolt::clitest {
namespace {

TEST(CliForceUnlock, DataUnderTheNameIsRefusedAndLeft) {
    test::RedisServer srv;
    srv.raw().cmd({"SET", "ws", "foreign"});
    auto r = deadbolt(srv.url(), {"force-unlock", "ws"});
    EXPECT_EQ(r.rc, 69) << r.out;
    EXPECT_TRUE(says(r, {"ws", "no lock token", "leaves it"}));
    EXPECT_EQ(srv.raw().cmd({"GET", "ws"}).str, "foreign");
    // A number, a long sentence, JSON: data too.
    for (const char* data :
         {"12345678901234567890", "a sentence of words, 2 of them", "{\"a\":1}"}) {
        srv.raw().cmd({"SET", "ws", data});
        EXPECT_EQ(deadbolt(srv.url(), {"force-unlock", "ws"}).rc, 69) << data;
        EXPECT_EQ(srv.raw().cmd({"GET", "ws"}).str, data);
    }
}

TEST(CliForceUnlock, ALockWithoutExpiryIsStillFreed) {
    test::RedisServer srv;
    // redis-py's Lock(timeout=None) writes a uuid1 hex token and no expiry; node-redlock a
    // random hex; both are locks, the very ones an operator frees by hand.
    for (const char* token : {"6f1d0a4e8b3c11ef9a2d0242ac120002", "b64+Token/1x2y3z4w=="}) {
        srv.raw().cmd({"SET", "stuck", token});
        auto r = deadbolt(srv.url(), {"force-unlock", "stuck"});
        EXPECT_EQ(r.rc, 0) << token << ": " << r.out;
        EXPECT_EQ(srv.raw().cmd({"EXISTS", "stuck"}).integer, 0) << token;
    }
    // With an expiry, any string is a lease (a foreign lock's), freed as before.
    srv.raw().cmd({"SET", "leased", "x", "PX", "60000"});
    EXPECT_EQ(deadbolt(srv.url(), {"force-unlock", "leased"}).rc, 0);
    EXPECT_EQ(srv.raw().cmd({"EXISTS", "leased"}).integer, 0);
}

}  // namespace
}  // namespace deadbolt::clitest
