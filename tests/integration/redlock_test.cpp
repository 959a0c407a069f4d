// Redlock over real independent redis-servers: majority, release everywhere, the two-round
// fence, renewal by majority, and the node sets it refuses.
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <future>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "deadbolt/deadbolt.hpp"
#include "eventually.hpp"
#include "redis_server.hpp"
#include "redlock_nodes.hpp"
#include "steered_clock.hpp"
#include "tcp_proxy.hpp"

using namespace std::chrono_literals;
using deadbolt::errc;
using deadbolt::make_error_code;
using deadbolt::test::eventually;
using deadbolt::test::RedisServer;
using deadbolt::test::TcpProxy;
using Clock = std::chrono::steady_clock;

using Cluster = deadbolt::test::RedlockNodes;
using deadbolt::test::code_of;

TEST(Redlock, TakesEveryNodeAndReleasesEveryNode) {
    Cluster c(5);
    auto client = deadbolt::Client::connect(c.url());
    EXPECT_TRUE(client.warnings().empty());
    auto m = client.mutex("job");
    ASSERT_TRUE(m.try_lock());
    const std::string token = m.lease().token();
    // The attempt returned once a majority granted; the other nodes follow.
    EXPECT_TRUE(eventually([&] { return c.holding("job", token) == 5; }));
    // Round 2 left the agreed fence in the counter of a majority at least (those that
    // granted before the round was decided).
    const std::string fence = std::to_string(m.lease().fence());
    EXPECT_GE(c.answering({"GET", "{job}:fence"}, fence), 3);
    auto other = deadbolt::Client::connect(c.url()).mutex("job");
    EXPECT_FALSE(other.try_lock());
    m.unlock();
    // The release returns once a majority took it; the rest follow at once.
    EXPECT_TRUE(eventually([&] { return c.holding("job", token) == 0; }));
    EXPECT_TRUE(other.try_lock());
}

TEST(Redlock, StatusIsTheMajoritysView) {
    Cluster c(3);
    auto client = deadbolt::Client::connect(c.url());
    EXPECT_FALSE(client.status("job").held);
    auto lease = client.acquire("job");
    auto s = client.status("job");
    EXPECT_TRUE(s.held);
    EXPECT_EQ(s.last_fence, lease.fence());
    EXPECT_GT(s.ttl.count(), 0);
    ASSERT_EQ(s.held_by.size(), 1u);
    EXPECT_EQ(s.held_by.front().pid, getpid());
    EXPECT_TRUE(s.held_by.front().since.has_value());
    // One node loses the key: still a majority. Two: no longer held.
    c[0].raw().cmd({"DEL", "job"});
    EXPECT_TRUE(client.status("job").held);
    ASSERT_EQ(client.list().size(), 1u);
    EXPECT_EQ(client.list().front().name, "job");
    c[1].raw().cmd({"DEL", "job"});
    EXPECT_FALSE(client.status("job").held);
    EXPECT_TRUE(client.list().empty());
    // Fewer than a majority answering is an error, not "free".
    c[0].stop();
    c[1].stop();
    EXPECT_EQ(code_of([&] { client.status("job"); }), errc::no_quorum);
    EXPECT_NE(code_of([&] { client.list(); }), errc{});
}

TEST(Redlock, AClientWhoseReleaseWentUnansweredEndsWithItsLastHandle) {
    Cluster c(3);
    const auto before = c[2].connections();
    {
        auto client = deadbolt::Client::connect(c.url());
        deadbolt::MutexOptions o;
        o.ttl = 60s;  // the background release would keep trying for a minute
        auto lease = client.acquire("job", o);
        c[0].stop();
        c[1].stop();
        lease = {};  // released without a majority's answer: retried in the background
    }
    // With both handles gone the client ends: its threads and connections do not live on
    // with the background release (at exit they would outlive what they use).
    EXPECT_TRUE(eventually([&] { return c[2].connections() <= before; }));
}

TEST(Redlock, FencesRiseAcrossClients) {
    Cluster c(3);
    auto a = deadbolt::Client::connect(c.url());
    auto b = deadbolt::Client::connect(c.url());
    std::uint64_t last = 0;
    for (int i = 0; i < 10; ++i) {
        auto l = (i % 2 ? a : b).acquire("job", {}, {});
        EXPECT_GT(l.fence(), last);
        last = l.fence();
    }
}

TEST(Redlock, ANodeRefusedItsClockUndoesTheFirstGrantOfAName) {
    // A name's first grant on a node (no counter there yet) reads the node's clock after it
    // wrote the lock and the counter. With TIME taken from the user after connect, each node
    // refuses there and undoes both writes: nothing is left behind.
    Cluster c(3);
    for (auto& n : c.nodes) n->raw().cmd({"ACL", "SETUSER", "u", "on", ">pw", "~*", "&*", "+@all"});
    std::string url = c.url();
    url.replace(0, std::string("redlock://").size(), "redlock://u:pw@");
    auto client = deadbolt::Client::connect(url);
    for (auto& n : c.nodes) n->raw().cmd({"ACL", "SETUSER", "u", "-time"});
    EXPECT_EQ(code_of([&] { client.mutex("job").try_lock(); }), errc::permission_denied);
    for (auto& n : c.nodes) EXPECT_EQ(n->raw().cmd({"DBSIZE"}).integer, 0);
}

TEST(Redlock, FencingOffSkipsTheFenceRound) {
    Cluster c(3);
    auto client = deadbolt::Client::connect(c.url("fencing=0"));
    auto m = client.mutex("job");
    ASSERT_TRUE(m.try_lock());
    const std::string token = m.lease().token();
    EXPECT_EQ(m.lease().fence(), 0u);  // no agreed fence: a node's own counter is not one
    // Without a fence round the grant returns once a majority granted; the third follows.
    EXPECT_TRUE(eventually([&] { return c.holding("job", token) == 3; }));
    // The grant is a bare SET: no node's fence counter is read or written.
    for (std::size_t i = 0; i < 3; ++i)
        EXPECT_EQ(c[i].raw().cmd({"EXISTS", "{job}:fence"}).integer, 0);
    EXPECT_EQ(code_of([&] { client.fenced_set("record", "v", m.lease().fence()); }),
              errc::invalid_argument);
    m.unlock();
    EXPECT_TRUE(eventually([&] { return c.holding("job", token) == 0; }));
}

TEST(Redlock, FencedSetIsRefusedWithTheReasonAndWritesNowhere) {
    Cluster c(3);
    auto client = deadbolt::Client::connect(c.url());
    auto lease = client.acquire("job");
    try {
        client.fenced_set("record", "v", lease.fence());
        ADD_FAILURE() << "fenced_set over redlock:// wrote to one node of three";
    } catch (const deadbolt::UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("one server"), std::string::npos) << e.what();
    }
    for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(c[i].raw().cmd({"EXISTS", "record"}).integer, 0);
}

TEST(Redlock, AMinorityDownStillLocksRenewsAndReleases) {
    Cluster c(5);
    c[3].stop();
    c[4].stop();
    auto client = deadbolt::Client::connect(c.url());
    ASSERT_FALSE(client.warnings().empty());  // two nodes were not checked
    deadbolt::MutexOptions o;
    o.ttl = 600ms;
    auto m = client.mutex("job", o);
    ASSERT_TRUE(m.try_lock());
    EXPECT_EQ(c.holding("job", m.lease().token()), 3);
    std::this_thread::sleep_for(2s);  // renewed by the three live nodes, three TTLs over
    EXPECT_TRUE(m.lease().valid());
    EXPECT_EQ(c.holding("job", m.lease().token()), 3);
    auto rival = deadbolt::Client::connect(c.url()).mutex("job", o);
    EXPECT_FALSE(rival.try_lock());
    m.unlock();
    EXPECT_TRUE(rival.try_lock());
}

TEST(Redlock, AWaiterGetsTheLockWhenTheFirstNodeIsDown) {
    // The first node carries the release messages; without it waiters wake at the holder's
    // expiry instead of failing.
    Cluster c(3);
    c[0].stop();
    auto holder = deadbolt::Client::connect(c.url());
    auto waiter = deadbolt::Client::connect(c.url("command_timeout=300ms"));
    deadbolt::MutexOptions o;
    o.ttl = 600ms;
    auto held = holder.acquire("job", o);
    std::thread release([&] {
        std::this_thread::sleep_for(300ms);
        held.release();
    });
    deadbolt::AcquireOptions how;
    how.deadline = Clock::now() + 10s;
    auto got = waiter.acquire("job", o, how);
    release.join();
    EXPECT_TRUE(got.valid());
    EXPECT_GT(got.fence(), 0u);
    EXPECT_EQ(c.holding("job", got.token()), 2);
    // And a stop request still ends such a wait at once: here the holder's keys have 30 s
    // left, so nothing else would wake it.
    auto long_hold = waiter.acquire("job2");  // the default 30 s TTL
    std::stop_source stop;
    deadbolt::AcquireOptions cancellable;
    cancellable.cancel = stop.get_token();
    std::thread canceller([&] {
        std::this_thread::sleep_for(300ms);
        stop.request_stop();
    });
    auto started = Clock::now();
    EXPECT_EQ(code_of([&] { holder.acquire("job2", deadbolt::MutexOptions{}, cancellable); }),
              errc::cancelled);
    EXPECT_LT(Clock::now() - started, 10s);  // woken by the stop, not by the 30 s expiry
    canceller.join();
}

TEST(Redlock, AWaiterIsWokenThroughAnotherNodeWhenTheFirstIsDown) {
    // The holder's majority is nodes 1 and 2, which publish its release: the waiter's
    // subscriber moves there instead of leaving it to the 60 s expiry (past its deadline).
    Cluster c(3);
    c[0].stop();
    auto holder = deadbolt::Client::connect(c.url());
    auto waiter = deadbolt::Client::connect(c.url("command_timeout=300ms"));
    deadbolt::MutexOptions o;
    o.ttl = 60s;
    auto held = holder.acquire("job", o);
    Clock::time_point released_at{};
    std::thread release([&] {
        std::this_thread::sleep_for(1500ms);
        released_at = Clock::now();
        held.release();
    });
    deadbolt::AcquireOptions how;
    how.deadline = Clock::now() + 30s;
    auto got = waiter.acquire("job", o, how);
    auto got_at = Clock::now();
    release.join();
    EXPECT_TRUE(got.valid());
    EXPECT_EQ(c.holding("job", got.token()), 2);
    EXPECT_LT(got_at - released_at, 15s);  // the release message, not a look at the deadline
}

TEST(Redlock, AMajorityDownIsAClearErrorAndLeavesNoKeys) {
    Cluster c(5);
    auto client = deadbolt::Client::connect(c.url());
    c[0].stop();
    c[1].stop();
    c[2].stop();
    auto m = client.mutex("job");
    try {
        m.try_lock();
        ADD_FAILURE() << "granted with 2 of 5 nodes";
    } catch (const deadbolt::ConnectionError& e) {
        EXPECT_EQ(e.code(), make_error_code(errc::no_quorum));
        EXPECT_NE(std::string(e.what()).find("2 of 5 Redlock nodes answered"), std::string::npos)
            << e.what();
        EXPECT_TRUE(e.retryable());
    }
    std::error_code ec;
    EXPECT_FALSE(m.try_lock(ec));
    EXPECT_EQ(ec, make_error_code(errc::no_quorum));
    // The two live nodes granted, and were given back.
    EXPECT_EQ(c[3].raw().cmd({"EXISTS", "job"}).integer, 0);
    EXPECT_EQ(c[4].raw().cmd({"EXISTS", "job"}).integer, 0);
    // And a new client cannot even connect.
    EXPECT_EQ(code_of([&] { deadbolt::Client::connect(c.url()); }), errc::no_quorum);
}

TEST(Redlock, ASplitVoteFailsAndGivesBackItsPartialKeys) {
    Cluster c(5);
    // Two other contenders hold two nodes each; only node 4 is free.
    for (int i : {0, 1}) c[i].raw().cmd({"SET", "job", "contender-a", "PX", "30000"});
    for (int i : {2, 3}) c[i].raw().cmd({"SET", "job", "contender-b", "PX", "30000"});
    auto client = deadbolt::Client::connect(c.url());
    auto m = client.mutex("job");
    EXPECT_FALSE(m.try_lock());
    EXPECT_EQ(c[4].raw().cmd({"EXISTS", "job"}).integer, 0);  // our partial key is gone
    EXPECT_EQ(c.holding("job", "contender-a"), 2);            // nobody else's was touched
    EXPECT_EQ(c.holding("job", "contender-b"), 2);
}

// A round returns once a majority decided, so a release may still be on its way to the third
// node when the program closes its client right after: it must get there all the same, within
// the node's timeout, and not be dropped with the client (the lock would stay held there for
// its whole TTL, a vote against every later grant).
TEST(Redlock, AReleaseStillOnItsWayWhenTheClientClosesReachesTheNode) {
    Cluster c(3);
    TcpProxy slow(c[2].port());
    std::string url = "redlock://127.0.0.1:" + std::to_string(c[0].port()) +
                      ",127.0.0.1:" + std::to_string(c[1].port()) +
                      ",127.0.0.1:" + std::to_string(slow.port());
    std::thread resume;
    {
        auto client = deadbolt::Client::connect(url);
        auto lease = client.acquire("straggler", {.ttl = 60s});
        ASSERT_TRUE(eventually([&] {
            return c[2].raw().cmd({"EXISTS", "straggler"}).integer == 1;
        })) << "node 2 never took the lock";
        slow.stall_requests(true);
        lease.release();  // nodes 0 and 1 decide it; node 2's copy waits in the proxy
        resume = std::thread([&slow] {
            std::this_thread::sleep_for(300ms);
            slow.stall_requests(false);
        });
    }  // the client closes while node 2's release is held back
    resume.join();
    EXPECT_TRUE(eventually(
        [&] {
            return c[2].raw().cmd({"EXISTS", "straggler"}).integer == 0;
        },
        5s))
        << "node 2 still holds the lock: its release was dropped with the client";
}

TEST(Redlock, ARoundNeitherWaitsForAStalledNodeNorForItsReconnect) {
    Cluster c(3);
    TcpProxy slow(c[2].port());
    std::string url = "redlock://127.0.0.1:" + std::to_string(c[0].port()) +
                      ",127.0.0.1:" + std::to_string(c[1].port()) +
                      ",127.0.0.1:" + std::to_string(slow.port()) +
                      "?command_timeout=20s&connect_timeout=20s";
    auto client = deadbolt::Client::connect(url);
    deadbolt::MutexOptions o;
    o.ttl = 300s;  // node 2 may take its per-node timeout, 20 s, to answer
    auto m = client.mutex("job", o);
    ASSERT_TRUE(m.try_lock());  // the scripts are loaded everywhere
    m.unlock();
    slow.stall_replies(true);
    // Nodes 0 and 1 decide each round: neither the grant nor the release waits for node 2.
    auto lock = std::async(std::launch::async, [&] { return m.try_lock(); });
    ASSERT_EQ(lock.wait_for(10s), std::future_status::ready) << "the grant waited for node 2";
    EXPECT_TRUE(lock.get());
    auto unlock = std::async(std::launch::async, [&] { m.unlock(); });
    ASSERT_EQ(unlock.wait_for(10s), std::future_status::ready) << "the release waited";
    // Node 2's connection drops; its new session's handshake stalls in turn. Opening it runs
    // beside the rounds on the event loop instead of holding them up.
    slow.cut_all();
    auto again = std::async(std::launch::async, [&] { return m.try_lock(); });
    ASSERT_EQ(again.wait_for(10s), std::future_status::ready) << "a connect held the loop";
    EXPECT_TRUE(again.get());
    slow.stall_replies(false);
}

TEST(Redlock, ARequestWhoseDeadlinePassedWhileItsSessionOpenedIsNeverSent) {
    Cluster c(3);
    TcpProxy slow(c[0].port());
    std::string url = "redlock://127.0.0.1:" + std::to_string(slow.port()) +
                      ",127.0.0.1:" + std::to_string(c[1].port()) +
                      ",127.0.0.1:" + std::to_string(c[2].port()) +
                      "?command_timeout=300ms&connect_timeout=10s";
    auto client = deadbolt::Client::connect(url);
    slow.stall_replies(true);
    slow.cut_all();  // node 0's session ends; the next one's handshake stalls
    client.ping();   // finds it gone (nodes 1 and 2 answer)
    // A ping opens the next session, with its own long deadline (connect + command timeout).
    auto ping = std::async(std::launch::async, [&] { client.ping(); });
    std::this_thread::sleep_for(200ms);
    // Nodes 1 and 2 grant; node 0's request queues behind the opening, due in 300 ms.
    auto lease = client.acquire("job");
    std::this_thread::sleep_for(1s);
    slow.stall_replies(false);  // the session opens now, long after that deadline
    ping.get();
    EXPECT_EQ(c[0].raw().cmd({"EXISTS", "job"}).integer, 0) << "sent after its deadline";
    EXPECT_TRUE(eventually([&] { return c.holding("job", lease.token()) == 2; }));
}

TEST(Redlock, ANodeThatAnswersAfterItsTimeoutIsOutvotedThenCleanedUp) {
    Cluster c(3);
    TcpProxy slow(c[2].port());
    std::string url = "redlock://127.0.0.1:" + std::to_string(c[0].port()) +
                      ",127.0.0.1:" + std::to_string(c[1].port()) +
                      ",127.0.0.1:" + std::to_string(slow.port()) +
                      "?command_timeout=200ms&command_connections=1";
    // One connection per node: a second one, opened while the stall holds back its PING's
    // answer, would never send the request this test needs to take effect there.
    auto client = deadbolt::Client::connect(url);
    deadbolt::MutexOptions o;
    o.ttl = 2s;  // per-node timeout 200 ms
    auto m = client.mutex("job", o);
    // Load the scripts first: a NOSCRIPT answer held back would mean nothing ran at all.
    ASSERT_TRUE(m.try_lock());
    m.unlock();
    // The release ends with a majority's answer; the third node's comes in the background.
    ASSERT_TRUE(eventually([&] {
        for (int i = 0; i < 3; ++i)
            if (c[i].raw().cmd({"EXISTS", "job"}).integer != 0) return false;
        return true;
    }));
    client.ping();             // and the client has read every node's answer
    slow.stall_replies(true);  // node 2 sets the key, but its answer comes too late
    ASSERT_TRUE(m.try_lock());
    std::string token = m.lease().token();
    // It did take effect there: the request went through, only the answer is held back (the
    // grant needs no second round, so it may land just after try_lock returned).
    EXPECT_TRUE(eventually([&] { return c[2].raw().cmd({"GET", "job"}).str == token; }));
    slow.stall_replies(false);
    m.unlock();
    // Released everywhere, the late node included (in the background once it answers).
    EXPECT_TRUE(eventually([&] { return c.holding("job", token) == 0; }));

    // Now two of three stall: fewer than a majority in time, and the keys the stalled nodes
    // did set are given back once they answer.
    TcpProxy slow1(c[1].port());
    std::string url2 = "redlock://127.0.0.1:" + std::to_string(c[0].port()) +
                       ",127.0.0.1:" + std::to_string(slow1.port()) +
                       ",127.0.0.1:" + std::to_string(slow.port()) + "?command_timeout=200ms";
    auto client2 = deadbolt::Client::connect(url2);
    client2.acquire("warm", o);  // scripts loaded on every node, as above
    slow.stall_replies(true);
    slow1.stall_replies(true);
    std::error_code ec;
    auto m2 = client2.mutex("job2", o);
    EXPECT_FALSE(m2.try_lock(ec));
    EXPECT_EQ(ec, make_error_code(errc::no_quorum));
    slow.stall_replies(false);
    slow1.stall_replies(false);
    EXPECT_TRUE(eventually([&] {
        int keys = 0;
        for (auto& s : c.nodes) keys += static_cast<int>(s->raw().cmd({"EXISTS", "job2"}).integer);
        return keys == 0;
    }));
}

// An attempt that too few nodes answer fails with no_quorum, and its give-back to the silent
// nodes is left to the background: the retry must take a new token, or that give-back deletes
// the retry's grant while its caller holds on (a torture run caught it). Node 0 answers every
// attempt, and MONITOR shows the token each one set there.
TEST(Redlock, ARetryAfterAGiveBackLeftPendingTakesANewToken) {
    Cluster c(3);
    TcpProxy slow1(c[1].port()), slow2(c[2].port());
    std::string url = "redlock://127.0.0.1:" + std::to_string(c[0].port()) +
                      ",127.0.0.1:" + std::to_string(slow1.port()) +
                      ",127.0.0.1:" + std::to_string(slow2.port()) + "?command_timeout=200ms";
    auto client = deadbolt::Client::connect(url);
    deadbolt::MutexOptions o;
    o.ttl = 2s;                 // per-node timeout 200 ms
    client.acquire("warm", o);  // scripts loaded and sessions open everywhere
    redisContext* monitor = redisConnect("127.0.0.1", c[0].port());
    ASSERT_TRUE(monitor != nullptr && monitor->err == 0);
    freeReplyObject(redisCommand(monitor, "MONITOR"));
    slow1.stall_replies(true);
    slow2.stall_replies(true);
    deadbolt::AcquireOptions how;
    how.deadline = Clock::now() + 1500ms;
    std::error_code ec;
    auto lease = client.acquire("job", o, how, ec);
    EXPECT_EQ(ec, make_error_code(errc::no_quorum));
    c[0].raw().cmd({"ECHO", "end-of-attempts"});
    const std::regex set_by(R"re(\[0 lua\] "SET" "job" "([^"]+)" "NX")re");
    std::vector<std::string> tokens;
    for (bool end = false; !end;) {
        void* r = nullptr;
        ASSERT_EQ(redisGetReply(monitor, &r), REDIS_OK);
        const auto* reply = static_cast<redisReply*>(r);
        std::string line(reply->str, reply->len);
        freeReplyObject(r);
        std::smatch m;
        if (std::regex_search(line, m, set_by)) tokens.push_back(m[1]);
        end = line.find("\"end-of-attempts\"") != std::string::npos;
    }
    redisFree(monitor);
    slow1.stall_replies(false);
    slow2.stall_replies(false);
    ASSERT_GE(tokens.size(), 2u) << "fewer than two attempts reached node 0";
    EXPECT_EQ(std::set<std::string>(tokens.begin(), tokens.end()).size(), tokens.size())
        << "a retry took the token of an attempt whose give-back was still pending";
}

TEST(Redlock, ANodeKilledWhileHeldCostsOneVote) {
    Cluster c(3);
    auto client = deadbolt::Client::connect(c.url());
    deadbolt::MutexOptions o;
    o.ttl = 600ms;
    auto m = client.mutex("job", o);
    ASSERT_TRUE(m.try_lock());
    c[0].stop();
    std::this_thread::sleep_for(1500ms);  // renewals now reach 2 of 3: still a majority
    EXPECT_TRUE(m.lease().valid());
    EXPECT_FALSE(m.lease().lost());
    m.lease().extend(5s);
    EXPECT_TRUE(m.lease().is_current());
}

TEST(Redlock, ANodeWhoseClockRunsFastCostsOneVote) {
    // Node 0's wall clock (by which Redis expires keys) runs 20 times too fast: our key there
    // expires early. With five nodes that costs one vote, never the lock.
    char dir[] = "/tmp/deadbolt-clock-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    deadbolt::torture::SteeredClock fast(std::string(dir) + "/clock", CLOCK_REALTIME);
    std::vector<std::unique_ptr<RedisServer>> nodes;
    nodes.push_back(std::make_unique<RedisServer>(std::vector<std::string>{},
                                                  fast.env(DEADBOLT_CLOCK_SHIM_DIR)));
    for (int i = 1; i < 5; ++i) nodes.push_back(std::make_unique<RedisServer>());
    std::string url = "redlock://";
    for (std::size_t i = 0; i < nodes.size(); ++i)
        url += (i ? ",127.0.0.1:" : "127.0.0.1:") + std::to_string(nodes[i]->port());
    auto a = deadbolt::Client::connect(url);
    auto b = deadbolt::Client::connect(url);
    deadbolt::MutexOptions o;
    o.ttl = 2s;
    fast.set_rate(20.0);
    auto held = a.acquire("job", o);
    auto count = [&](const std::string& token) {
        int n = 0;
        for (auto& s : nodes) n += s->raw().cmd({"GET", "job"}).str == token ? 1 : 0;
        return n;
    };
    EXPECT_TRUE(eventually(
        [&] {
            return nodes[0]->raw().cmd({"EXISTS", "job"}).integer == 0;
        },
        2s));  // gone on the fast node within a tenth of the TTL or so
    EXPECT_FALSE(b.mutex("job", o).try_lock());  // node 0 is free, but 4 nodes still say no
    EXPECT_EQ(nodes[0]->raw().cmd({"EXISTS", "job"}).integer, 0);  // b's partial key released
    std::this_thread::sleep_for(3s);  // renewals go on with 4 of 5 nodes
    EXPECT_TRUE(held.valid());
    EXPECT_FALSE(held.lost());
    EXPECT_GE(count(held.token()), 4);
    auto before = held.fence();
    held.release();
    auto next = b.acquire("job", o);
    EXPECT_GT(next.fence(), before);
    fast.set_rate(1.0);
    nodes.clear();
    std::filesystem::remove_all(dir);
}

TEST(Redlock, RenewalThatReachesOnlyAMinorityLosesTheLease) {
    Cluster c(5);
    auto client = deadbolt::Client::connect(c.url());
    std::atomic<int> lost{0};
    deadbolt::MutexOptions o;
    o.ttl = 600ms;
    o.on_lost = [&](std::string_view, std::error_code) { ++lost; };
    auto m = client.mutex("job", o);
    ASSERT_TRUE(m.try_lock());
    auto stop = m.lease().stop_token();
    c[0].pause();
    c[1].pause();
    c[2].pause();
    EXPECT_TRUE(eventually([&] { return stop.stop_requested(); }, 5s));
    EXPECT_TRUE(m.lease().lost());
    // on_lost runs just after the stop token fires.
    EXPECT_TRUE(eventually([&] { return lost.load() == 1; }, 5s));
    for (int i : {0, 1, 2}) c[i].resume();
}

TEST(Redlock, ExtendCountsOnlyWithAMajority) {
    Cluster c(5);
    auto client = deadbolt::Client::connect(c.url());
    auto m = client.mutex("job");
    ASSERT_TRUE(m.try_lock());
    // The attempt returned once a majority granted; the other two follow.
    ASSERT_TRUE(eventually([&] { return c.holding("job", m.lease().token()) == 5; }));
    // Someone deletes our key on three nodes: a majority no longer holds it.
    for (int i : {0, 1, 2}) c[i].raw().cmd({"DEL", "job"});
    EXPECT_FALSE(m.lease().is_current());
    EXPECT_EQ(code_of([&] { m.lease().extend(10s); }), errc::not_owner);
    EXPECT_TRUE(m.lease().lost());
}

TEST(Redlock, TwoRoundFencingOrdersAcquisitionsWithDisjointCounters) {
    // A per-node counter alone would not order these: node A's counter is far ahead of the
    // others. X takes {A, B} and gets a fence above A's counter; Y takes {B, C} while A is away.
    // Y reads only B and C, so without round 2 (which wrote X's fence into B's counter) Y's
    // fence would be below X's.
    Cluster c(3);
    const std::string ahead = "5000000000000000";  // far above any server's time in µs
    c[0].raw().cmd({"SET", "{job}:fence", ahead, "PX", "600000"});
    c[2].stop();  // X cannot reach C
    auto x = deadbolt::Client::connect(c.url());
    std::uint64_t fx = 0;
    {
        auto l = x.acquire("job");
        fx = l.fence();
        EXPECT_GT(fx, 5000000000000000ULL);
    }
    c[2].start();
    c[0].pause();  // Y cannot reach A
    auto y = deadbolt::Client::connect(c.url() + "?command_timeout=300ms");
    auto ly = y.acquire("job");
    EXPECT_GT(ly.fence(), fx) << "round 2 did not carry X's fence to node B";
    c[0].resume();
    // B and C at least (A may still take Y's request, sent before the round was decided).
    EXPECT_GE(c.holding("job", ly.token()), 2);
    // The fenced resource orders them the same way: X's stale write is refused after Y's.
    auto direct = deadbolt::Client::connect(c[1].url());
    EXPECT_TRUE(direct.fenced_set("record", "y", ly.fence()).accepted);
    EXPECT_FALSE(direct.fenced_set("record", "x", fx).accepted);
}

TEST(Redlock, NodesThatTakeTheProposedFenceAgreeInOneRound) {
    // Round 1 proposes a fence above the last this client agreed on; nodes whose counters are
    // below it take it, so a majority agrees without the fence round: one script per node.
    Cluster c(3);
    auto x = deadbolt::Client::connect(c.url());
    std::uint64_t first = 0;
    {
        auto l = x.acquire("job");  // no counters yet: each node's clock, then round 2
        first = l.fence();
    }
    for (auto& n : c.nodes) n->raw().cmd({"CONFIG", "RESETSTAT"});
    auto l = x.acquire("job");
    EXPECT_GT(l.fence(), first);
    const std::string fence = std::to_string(l.fence());
    for (auto& n : c.nodes) {
        EXPECT_TRUE(eventually([&] { return n->raw().calls("evalsha") == 1; }));
        // The lock and the counter, written and read in one SET ... GET: no clock, no GET.
        EXPECT_EQ(n->raw().calls("set"), 2);
        EXPECT_EQ(n->raw().calls("get"), 0);
        EXPECT_EQ(n->raw().calls("time"), 0);
    }
    EXPECT_EQ(c.answering({"GET", "{job}:fence"}, fence), 3);
    for (auto& n : c.nodes) EXPECT_EQ(n->raw().calls("evalsha"), 1) << "a second round ran";
    l.release();
    // Another client, whose proposal (its clock) may be below the counters: it is still
    // ordered after, in one round or two.
    auto y = deadbolt::Client::connect(c.url()).acquire("job");
    EXPECT_GT(y.fence(), l.fence());
}

TEST(Redlock, ContendersNeverOverlap) {
    Cluster c(3);
    std::atomic<int> inside{0}, overlaps{0}, done{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&] {
            auto client = deadbolt::Client::connect(c.url());
            for (int i = 0; i < 25; ++i) {
                auto l = client.acquire("job", {}, {});
                if (++inside > 1) ++overlaps;
                std::this_thread::sleep_for(1ms);
                --inside;
                ++done;
            }
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(overlaps.load(), 0);
    EXPECT_EQ(done.load(), 100);
}

TEST(Redlock, ManyThreadsShareOneClient) {
    // Every round writes to each node from the calling thread while other threads drive the
    // same connections: no request may be lost or left waiting for its deadline.
    Cluster c(3);
    auto client = deadbolt::Client::connect(c.url());
    std::atomic<int> done{0}, errors{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 16; ++t)
        threads.emplace_back([&, t] {
            auto m = client.mutex("job-" + std::to_string(t));
            for (int i = 0; i < 30; ++i) {
                std::error_code ec;
                if (m.try_lock(ec) && !ec) {
                    m.unlock();
                    ++done;
                } else {
                    ++errors;
                }
            }
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(errors.load(), 0);
    EXPECT_EQ(done.load(), 16 * 30);
}

TEST(Redlock, RefusesNodeSetsThatWeakenIt) {
    Cluster c(3);
    auto port = [&](int i) { return std::to_string(c[i].port()); };
    // Fewer than three.
    EXPECT_EQ(
        code_of([&] {
            deadbolt::Client::connect("redlock://127.0.0.1:" + port(0) + ",127.0.0.1:" + port(1));
        }),
        errc::invalid_argument);
    EXPECT_NO_THROW(deadbolt::Client::connect("redlock://127.0.0.1:" + port(0) +
                                              ",127.0.0.1:" + port(1) + "?allow_fewer=1"));
    // One server under two names.
    try {
        deadbolt::Client::connect("redlock://127.0.0.1:" + port(0) + ",localhost:" + port(0) +
                                  ",127.0.0.1:" + port(1));
        ADD_FAILURE() << "the same server counted twice";
    } catch (const deadbolt::UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("listed twice"), std::string::npos) << e.what();
    }
    // A replica of another node.
    RedisServer replica({"--replicaof", "127.0.0.1", port(0)});
    try {
        deadbolt::Client::connect("redlock://127.0.0.1:" + port(0) + ",127.0.0.1:" + port(1) +
                                  ",127.0.0.1:" + std::to_string(replica.port()));
        ADD_FAILURE() << "a replica counted as an independent master";
    } catch (const deadbolt::UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("is a replica of 127.0.0.1:" + port(0)),
                  std::string::npos)
            << e.what();
    }
    // An even count is legal, and warned about.
    RedisServer fourth;
    auto four = deadbolt::Client::connect(c.url() + ",127.0.0.1:" + std::to_string(fourth.port()));
    ASSERT_EQ(four.warnings().size(), 1u);
    EXPECT_NE(four.warnings()[0].find("use an odd count"), std::string::npos) << four.warnings()[0];
    // Options that make no sense for Redlock.
    EXPECT_EQ(code_of([&] { deadbolt::Client::connect(c.url("sync_replicas=1")); }),
              errc::invalid_url);
    EXPECT_EQ(code_of([&] { deadbolt::Client::connect("redlock://"); }), errc::invalid_url);
}

TEST(Redlock, PrimitivesThatCannotKeepTheirPromiseAreRefusedWithTheReason) {
    Cluster c(3);
    auto client = deadbolt::Client::connect(c.url());
    try {
        client.semaphore("s", 2);
        ADD_FAILURE() << "a semaphore over Redlock";
    } catch (const deadbolt::UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("N + 1 holders"), std::string::npos) << e.what();
    }
    EXPECT_EQ(code_of([&] { client.fair_mutex("f"); }), errc::invalid_argument);
    EXPECT_EQ(code_of([&] { client.rate_limiter("r", {10, 1s, 10}); }), errc::invalid_argument);
    EXPECT_EQ(code_of([&] { client.latch("l"); }), errc::invalid_argument);
    EXPECT_EQ(code_of([&] { client.permit_semaphore("p", 2); }), errc::invalid_argument);
    try {
        client.acquire("f", deadbolt::LockMode::fair, {});
        ADD_FAILURE() << "a fair lock over Redlock";
    } catch (const deadbolt::UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("FIFO queue"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("Redlock offers Mutex"), std::string::npos)
            << e.what();
    }
    // Nothing was written anywhere.
    for (auto& s : c.nodes) EXPECT_EQ(s->raw().cmd({"DBSIZE"}).integer, 0);
}

// A waiter hears of a release from the first node only. When that node frees the lock before
// the others (a slower link), the waiter it wakes still finds a majority held, and the other
// nodes announce their release only to their own subscribers: it must try again, not sleep
// until the holder's expiry.
TEST(Redlock, AWaiterGetsALockTheFirstNodeFreedBeforeTheMajorityDid) {
    Cluster c(3);
    TcpProxy slow1(c[1].port()), slow2(c[2].port());
    auto holder = deadbolt::Client::connect(
        deadbolt::test::redlock_url({c[0].port(), slow1.port(), slow2.port()}));
    auto waiter = deadbolt::Client::connect(c.url());
    auto lease = holder.acquire("job", {.ttl = 60s});
    ASSERT_TRUE(eventually([&] { return c.holding("job", lease.token()) == 3; }));
    // Well past a handoff, well short of what the waiter would sleep without a look: its place
    // in the line lasts 5 s (waiter_ttl), the holder's TTL 60 s.
    const auto deadline = Clock::now() + 4s;
    std::thread releaser([&] {
        std::this_thread::sleep_for(200ms);  // the waiter is waiting
        slow1.stall_requests(true);
        slow2.stall_requests(true);
        std::thread resume([&] {
            // Node 0 has freed the lock; nodes 1 and 2 still hold it for a while.
            EXPECT_TRUE(eventually([&] { return c.holding("job", lease.token()) == 2; }));
            std::this_thread::sleep_for(300ms);
            slow1.stall_requests(false);
            slow2.stall_requests(false);
        });
        lease.release();
        resume.join();
    });
    auto got = waiter.acquire("job", {.ttl = 10s}, {.deadline = deadline});
    EXPECT_LT(Clock::now(), deadline) << "the waiter slept past the release";
    releaser.join();
    EXPECT_EQ(c.holding("job", got.token()), 3);
}
