// Interop with redis-py's Lock (Debian python3-redis): same key format, both directions.
#include <gtest/gtest.h>

#include "deadbolt/deadbolt.hpp"
#include "redis_server.hpp"

using namespace std::chrono_literals;
using deadbolt::test::RedisServer;
using deadbolt::test::run_command;
using Clock = std::chrono::steady_clock;

namespace {

// Runs a redis-py snippet with `r` connected to the server; returns its stdout, trimmed.
std::string py(const RedisServer& srv, const std::string& body) {
    std::string code =
        "import redis, sys, time\nr = redis.Redis(port=" + std::to_string(srv.port()) + ")\n" +
        body;
    std::string out;
    int rc = run_command({"/usr/bin/python3", "-c", code}, &out);
    EXPECT_EQ(rc, 0) << out;
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    return out;
}

}  // namespace

TEST(Interop, RedisPyCannotTakeADeadboltLockNorReleaseIt) {
    RedisServer srv;
    auto c = deadbolt::Client::connect(srv.url());
    auto l = c.acquire("shared-job", {}, {.deadline = Clock::now()});
    EXPECT_EQ(py(srv, "print(r.lock('shared-job', timeout=5).acquire(blocking=False))"), "False");
    // redis-py's release with its own token must fail and leave our key alone.
    EXPECT_EQ(py(srv,
                 "l = r.lock('shared-job', timeout=5)\n"
                 "l.local.token = b'not-the-owner'\n"
                 "try:\n  l.release(); print('released')\n"
                 "except redis.exceptions.LockNotOwnedError: print('not-owned')"),
              "not-owned");
    EXPECT_TRUE(l.is_current());
    l.release();
    EXPECT_EQ(py(srv, "print(r.lock('shared-job', timeout=5).acquire(blocking=False))"), "True");
}

TEST(Interop, DeadboltWaitsForARedisPyHolder) {
    RedisServer srv;
    auto c = deadbolt::Client::connect(srv.url());
    // redis-py holds the lock for 1 s (its TTL), then it expires.
    EXPECT_EQ(py(srv, "print(r.lock('py-held', timeout=1).acquire(blocking=False))"), "True");
    EXPECT_THROW(c.acquire("py-held", {}, {.deadline = Clock::now()}), deadbolt::LockError);
    auto t0 = Clock::now();
    auto l = c.acquire("py-held", {}, {.deadline = Clock::now() + 5s});
    EXPECT_TRUE(l.valid());
    EXPECT_GE(Clock::now() - t0, 500ms);
}

TEST(Interop, RedisPyWaiterGetsTheLockAfterDeadboltReleases) {
    RedisServer srv;
    auto c = deadbolt::Client::connect(srv.url());
    auto l = c.acquire("handover", {}, {.deadline = Clock::now()});
    std::string out;
    std::thread t([&] {
        out = py(srv,
                 "t0 = time.time()\n"
                 "ok = r.lock('handover', timeout=5, sleep=0.01).acquire(blocking_timeout=10)\n"
                 "print(ok, time.time() - t0 < 9)");
    });
    std::this_thread::sleep_for(300ms);
    l.release();
    t.join();
    EXPECT_EQ(out, "True True");
}
