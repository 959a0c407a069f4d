// Command connections of blocking callers: one while calls come one at a time, more (up to
// RedisOptions::command_connections) while callers overlap, one with sync_replicas, and all
// of them follow a Sentinel failover.
#include <gtest/gtest.h>

#include <asio/use_future.hpp>

#include <atomic>
#include <future>
#include <thread>
#include <vector>

#include "backends/redis/net/connection.hpp"
#include "backends/redis/net/resp.hpp"
#include "deadbolt/async.hpp"
#include "deadbolt/deadbolt.hpp"
#include "deadbolt/redis_options.hpp"
#include "eventually.hpp"
#include "redis_server.hpp"
#include "sentinel_group.hpp"
#include "tcp_proxy.hpp"

using namespace std::chrono_literals;
using deadbolt::test::eventually;
using deadbolt::test::RedisServer;

namespace {

// With replies held back, `callers` threads each acquire a name of their own: how many
// connections the client opened beyond its first. A new connection waits for its PING's
// reply, so while replies are held only the first connection's callers reach the server:
// every caller has found its connection once scripts run + connections opened = callers.
int connections_while_overlapping(deadbolt::ClientOptions o, int callers) {
    o.connect_timeout = o.command_timeout = 20s;  // replies are held back on purpose
    RedisServer srv;
    deadbolt::test::TcpProxy proxy(srv.port());
    auto c = deadbolt::Client::connect(proxy.url(), o);
    c.acquire("warm-up").release();
    // The holder's subscriber (force-unlock's notices) connects by itself: not a lane.
    EXPECT_TRUE(eventually([&] {
        return srv.raw().cmd({"PUBSUB", "NUMSUB", "{deadbolt}:freed"}).elements.at(1).integer == 1;
    }));
    const int before = srv.connections();
    auto scripts_in = [&] { return int(srv.raw().cmd({"KEYS", "job*"}).elements.size()); };
    proxy.stall_replies(true);
    std::vector<std::future<deadbolt::Lease>> got;
    got.reserve(callers);
    for (int i = 0; i < callers; ++i)
        got.push_back(std::async(std::launch::async,
                                 [&c, i] { return c.acquire("job" + std::to_string(i)); }));
    const bool all_placed =
        eventually([&] { return scripts_in() + srv.connections() - before >= callers; }, 10s);
    EXPECT_TRUE(all_placed) << scripts_in() << " scripts in, " << srv.connections() - before
                            << " connections opened";
    proxy.stall_replies(false);
    for (auto& f : got) EXPECT_TRUE(f.get().held());
    return srv.connections() - before;
}
// SET key value, encoded.
std::string set_command(std::string_view key, std::string_view value) {
    std::string out;
    deadbolt::detail::encode_command(out, {"SET", key, value});
    return out;
}

// Redis's options with n command connections.
std::shared_ptr<const deadbolt::RedisOptions> redis_options(int n) {
    deadbolt::RedisOptions r;
    r.command_connections = n;
    return std::make_shared<deadbolt::RedisOptions>(r);
}

}  // namespace

TEST(Connections, OverlappingBlockingCallersOpenConnectionsUpToTheLimit) {
    deadbolt::ClientOptions o;
    o.engine = redis_options(3);
    EXPECT_EQ(connections_while_overlapping(o, 6), 2) << "two more than the first, no more";
    o.engine = redis_options(1);
    EXPECT_EQ(connections_while_overlapping(o, 6), 0) << "all pipelined on the first";
}

// Callers that share one connection write their own requests while its leader waits for
// replies; requests too big for the socket's buffer go to the leader's reactor. Each must get
// its own reply: a value read back is the one its thread wrote, and no call times out.
TEST(Connections, CallersSharingOneConnectionGetTheirOwnRepliesSmallOrLarge) {
    deadbolt::ClientOptions o;
    o.engine = redis_options(1);
    RedisServer srv;
    auto c = deadbolt::Client::connect(srv.url(), o);
    constexpr int kThreads = 8, kRounds = 30;
    std::atomic<int> wrong{0};
    std::vector<std::thread> callers;
    callers.reserve(kThreads);
    for (int t = 0; t < kThreads; ++t)
        callers.emplace_back([&, t] {
            const std::string key = "data" + std::to_string(t);
            for (int i = 0; i < kRounds; ++i) {
                // Every other thread writes 1 MB (more than a socket's buffer takes at once).
                std::string value(t % 2 == 0 ? std::size_t{1} << 20 : 16, char('a' + t));
                value += std::to_string(i);
                auto lease = c.acquire("job" + std::to_string(t));
                if (!c.fenced_set(key, value, lease.fence()).accepted) ++wrong;
                if (c.fenced_get(key).value != value) ++wrong;
                lease.release();
            }
        });
    for (auto& th : callers) th.join();
    EXPECT_EQ(wrong.load(), 0);
}
TEST(Connections, SyncReplicasKeepsOneConnectionForWaitToCountItsWrites) {
    deadbolt::RedisOptions r;
    r.command_connections = 4;
    r.sync_replicas = 1;
    r.sync_timeout = 10ms;
    deadbolt::ClientOptions o;
    o.engine = std::make_shared<deadbolt::RedisOptions>(r);
    RedisServer srv;
    deadbolt::test::TcpProxy proxy(srv.port());
    auto c = deadbolt::Client::connect(proxy.url(), o);
    std::error_code warm;
    (void)c.acquire("warm-up", {}, {}, warm);  // opens the session; refused (no replica)
    const int before = srv.connections();
    const auto keys = srv.raw().cmd({"DBSIZE"}).integer;
    proxy.stall_replies(true);
    std::vector<std::future<void>> calls;
    for (int i = 0; i < 4; ++i)
        calls.push_back(std::async(std::launch::async, [&c, i] {
            std::error_code ec;
            (void)c.acquire("job" + std::to_string(i), {}, {}, ec);  // no replica: refused
        }));
    bool all_in = eventually([&] { return srv.raw().cmd({"DBSIZE"}).integer >= keys + 4; }, 10s);
    const int opened = srv.connections() - before;
    proxy.stall_replies(false);
    for (auto& f : calls) f.get();
    EXPECT_TRUE(all_in) << srv.raw().cmd({"DBSIZE"}).integer << " keys";
    EXPECT_EQ(opened, 0);
}

TEST(Connections, EveryConnectionFollowsAFailover) {
    deadbolt::test::SentinelGroup w;
    deadbolt::ClientOptions o;
    o.engine = redis_options(4);
    auto client = deadbolt::Client::connect(w.url(), o);
    const int before = w.primary.connections();
    auto hammer = [&client](const std::string& tag) {
        std::atomic<int> failed{0};
        std::vector<std::thread> ts;
        for (int t = 0; t < 8; ++t)
            ts.emplace_back([&, t] {
                for (int i = 0; i < 100; ++i) {
                    std::error_code ec;
                    auto l = client.acquire(tag + std::to_string(t) + "-" + std::to_string(i), {},
                                            {}, ec);
                    if (ec) ++failed;
                }
            });
        for (auto& t : ts) t.join();
        return failed.load();
    };
    EXPECT_EQ(hammer("before-"), 0);
    ASSERT_GT(w.primary.connections(), before) << "overlapping callers opened more connections";
    auto promoted = w.fail_over();
    int probe = 0;
    ASSERT_TRUE(eventually(  // the client has followed: a lock lands on the new primary
        [&] {
            std::error_code ec;
            auto l = client.acquire("probe" + std::to_string(++probe), {}, {}, ec);
            return !ec && w.by_port(promoted).raw().cmd({"GET", l.name()}).str == l.token();
        },
        20s));
    // A connection left on the old primary would still run scripts there (until the
    // sentinels demote it, its writes even succeed, and are lost with it). EVALSHA counts the
    // scripts it ran as a primary: a replica applies their effects instead.
    const long long old_scripts = w.primary.raw().calls("evalsha");
    EXPECT_EQ(hammer("after-"), 0);
    EXPECT_EQ(w.primary.raw().calls("evalsha"), old_scripts)
        << "a connection still wrote to the old primary";
    EXPECT_GE(w.by_port(promoted).connections(), 2) << "the lanes reconnected to the new primary";
}

namespace {

// A Connection to an old primary behind a proxy, and a new primary: the leader has sent
// "first" to the old one and waits there for its reply, which the proxy holds back.
struct LeaderOnTheOldServer {
    RedisServer old_primary, new_primary;
    deadbolt::test::TcpProxy proxy{old_primary.port()};
    deadbolt::detail::Connection conn{endpoint(proxy.port())};
    std::future<deadbolt::detail::Status> leader;

    static deadbolt::detail::Endpoint endpoint(std::uint16_t port) {
        deadbolt::detail::Endpoint ep;
        ep.port = port;
        return ep;
    }
    static std::chrono::steady_clock::time_point in(std::chrono::seconds s) {
        return std::chrono::steady_clock::now() + s;
    }
    // The leader's own deadline is leader_for away; false when it could not be set up.
    bool start(std::chrono::seconds leader_for) {
        std::vector<deadbolt::detail::Reply> r;
        if (!conn.exec(set_command("warm", "1"), 1, r, in(10s)).ok()) return false;
        proxy.stall_replies(true);
        leader = std::async(std::launch::async, [this, leader_for] {
            std::vector<deadbolt::detail::Reply> mine;
            return conn.exec(set_command("first", "old"), 1, mine, in(leader_for));
        });
        return eventually([&] { return old_primary.raw().cmd({"GET", "first"}).str == "old"; });
    }
};

}  // namespace

// A failover's retarget holds from the next request on, also while the leader still waits
// for a reply from the old server: a caller that comes then must not write its request into
// the old session (a partitioned old primary would take it, and lose it).
TEST(Connections, ARequestAfterARetargetGoesToTheNewServerWhileTheLeaderStillWaits) {
    LeaderOnTheOldServer s;
    ASSERT_TRUE(s.start(30s));
    s.conn.retarget("127.0.0.1", s.new_primary.port());
    // Queued behind the waiting leader: the old session is in use, and a retarget is pending.
    auto second = s.conn.submit(set_command("second", "new"), 1);
    s.proxy.stall_replies(false);
    std::vector<deadbolt::detail::Reply> replies;
    ASSERT_TRUE(s.conn.wait(second, replies, s.in(30s)).ok());
    s.leader.get();  // its request was sent before the retarget: either outcome is right
    EXPECT_EQ(s.new_primary.raw().cmd({"GET", "second"}).str, "new");
    EXPECT_EQ(s.old_primary.raw().cmd({"GET", "second"}).type, deadbolt::test::RawReply::nil)
        << "a request made after the retarget went to the old server";
}

// The asynchronous API's connection, made at its first use, is made where the primary is now:
// a failover that the client heard of before (its blocking connection has not moved yet, as
// it has sent nothing since) must not send it to the old primary.
TEST(Connections, TheFirstAsynchronousCallAfterAFailoverGoesToTheNewPrimary) {
    deadbolt::test::SentinelGroup w;
    auto client = deadbolt::Client::connect(w.url());
    client.acquire("warm-up").release();  // its holding started the subscriber
    auto promoted = w.fail_over();
    // The client heard of it: its subscriber listens on the new primary.
    ASSERT_TRUE(eventually(
        [&] {
            return w.by_port(promoted)
                       .raw()
                       .cmd({"PUBSUB", "NUMSUB", "{deadbolt}:freed"})
                       .elements.at(1)
                       .integer == 1;
        },
        20s));
    auto l = deadbolt::async_acquire(client, "job", {}, {}, asio::use_future).get();
    EXPECT_EQ(w.by_port(promoted).raw().cmd({"GET", "job"}).str, l.token());
}

// A leader that waits for a reply the old server will never send (partitioned) must not hold
// the callers after a retarget until its own deadline: it gives its request up as unknown,
// and they go to the new server.
TEST(Connections, ARetargetMovesALeaderThatWaitsForAnOldServerThatNeverAnswers) {
    LeaderOnTheOldServer s;
    ASSERT_TRUE(s.start(60s));  // replies held until the end: the old server never answers
    s.conn.retarget("127.0.0.1", s.new_primary.port());
    auto second = s.conn.submit(set_command("second", "new"), 1);
    // Far sooner than the leader's own wait would end (its read is bounded by half of 60 s).
    std::vector<deadbolt::detail::Reply> replies;
    auto st = s.conn.wait(second, replies, s.in(10s));
    EXPECT_TRUE(st.ok()) << st.detail;
    EXPECT_EQ(s.new_primary.raw().cmd({"GET", "second"}).str, "new");
    EXPECT_EQ(s.leader.get().ec, deadbolt::make_error_code(deadbolt::errc::unknown_outcome))
        << "the leader's request was sent to the old primary: its outcome is unknown";
    s.proxy.stall_replies(false);
}
