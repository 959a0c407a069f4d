// Waiting: woken by the release message, no polling traffic while waiting.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <future>
#include <thread>

#include "deadbolt/deadbolt.hpp"
#include "process_threads.hpp"
#include "redis_server.hpp"

using namespace std::chrono_literals;
using deadbolt::test::RedisServer;
using Clock = std::chrono::steady_clock;

namespace {

// A long-running server knows every script deadbolt uses; a fresh one loads each at its first
// use (NOSCRIPT, then EVAL). Waiting once on name (held) and giving up loads those of a wait,
// so the counts that follow are the waiters' own.
void wait_once_and_give_up(const RedisServer& srv, const std::string& name) {
    auto c = deadbolt::Client::connect(srv.url());
    std::error_code ec;
    c.acquire(name, {.ttl = 60s}, {.deadline = Clock::now() + 300ms}, ec);
    EXPECT_EQ(ec, deadbolt::errc::not_acquired);
}

}  // namespace

TEST(Waiting, ReleaseWakesWaiterLongBeforeExpiry) {
    RedisServer srv;
    auto a = deadbolt::Client::connect(srv.url());
    auto b = deadbolt::Client::connect(srv.url());
    auto held = a.acquire("handoff", {.ttl = 30s}, {.deadline = Clock::now()});
    std::thread releaser([&] {
        std::this_thread::sleep_for(300ms);
        held.release();
    });
    auto t0 = Clock::now();
    auto got = b.acquire("handoff", {.ttl = 30s}, {.deadline = Clock::now() + 20s});
    auto waited = Clock::now() - t0;
    releaser.join();
    EXPECT_TRUE(got.valid());
    // Without the release message the waiter would sleep until the 30 s TTL ran out.
    EXPECT_LT(waited, 10s);
    EXPECT_GT(got.fence(), held.fence());
}

TEST(Waiting, EightWaitersSendNoPollingTraffic) {
    RedisServer srv;
    auto holder = deadbolt::Client::connect(srv.url());
    auto held = holder.acquire("busy", {.ttl = 60s}, {.deadline = Clock::now()});
    wait_once_and_give_up(srv, "busy");
    std::vector<deadbolt::Client> clients;
    for (int i = 0; i < 8; ++i) clients.push_back(deadbolt::Client::connect(srv.url()));
    auto raw = srv.raw();
    auto before = raw.client_commands();
    std::vector<std::thread> ts;
    std::atomic<int> timed_out{0};
    auto t0 = Clock::now();
    for (auto& c : clients)
        ts.emplace_back([&] {
            std::error_code ec;
            auto l = c.acquire("busy", {.ttl = 60s}, {.deadline = Clock::now() + 5s}, ec);
            if (ec == deadbolt::errc::not_acquired && !l) ++timed_out;
        });
    for (auto& t : ts) t.join();
    auto elapsed = Clock::now() - t0;
    auto commands = raw.client_commands() - before;
    EXPECT_EQ(timed_out.load(), 8);
    EXPECT_GE(elapsed, 5s);
    // Per waiter: the subscriber connection's handshake PING, attempt, SUBSCRIBE (its inbox
    // and notices, one command), attempt (it lines up), final attempt at the deadline, and
    // leaving the line (a script; the inbox stays subscribed). A 100 ms poller would send
    // ~50 per waiter.
    EXPECT_LE(commands, 8 * 6) << commands << " commands while 8 clients waited 5 s";
}

TEST(Waiting, LocalThreadsQueueWithoutServerTraffic) {
    RedisServer srv;
    auto holder = deadbolt::Client::connect(srv.url());
    auto held = holder.acquire("local", {.ttl = 60s}, {.deadline = Clock::now()});
    wait_once_and_give_up(srv, "local");
    auto c = deadbolt::Client::connect(srv.url());
    auto raw = srv.raw();
    auto before = raw.client_commands();
    std::vector<std::thread> ts;
    // One deadline for all: threads started late under load must not outlast the first.
    auto deadline = Clock::now() + 2s;
    for (int i = 0; i < 6; ++i)
        ts.emplace_back([&] {
            std::error_code ec;
            c.acquire("local", {.ttl = 60s}, {.deadline = deadline}, ec);
        });
    for (auto& t : ts) t.join();
    auto commands = raw.client_commands() - before;
    // Six threads of one process: one talks to the server at a time, and each waits its
    // turn locally; the others' deadlines pass in the local queue with no traffic at all.
    // Without the local queue each thread would attempt, subscribe, attempt, retry at its
    // deadline and leave the line (~30 commands); with it, one does, and the others reach the
    // server at most once each, if their turn comes just as their deadline passes.
    EXPECT_LE(commands, 11) << commands;
}

TEST(Waiting, CancelStopsTheWait) {
    RedisServer srv;
    auto a = deadbolt::Client::connect(srv.url());
    auto b = deadbolt::Client::connect(srv.url());
    auto held = a.acquire("cancel-me", {.ttl = 60s}, {.deadline = Clock::now()});
    std::stop_source stop;
    std::thread canceller([&] {
        std::this_thread::sleep_for(200ms);
        stop.request_stop();
    });
    auto t0 = Clock::now();
    std::error_code ec;
    auto l = b.acquire("cancel-me", {}, {.cancel = stop.get_token()}, ec);
    canceller.join();
    EXPECT_EQ(ec, deadbolt::errc::cancelled);
    EXPECT_LT(Clock::now() - t0, 5s);
}

TEST(Waiting, CancelStopsALocalWaitToo) {
    RedisServer srv;
    auto a = deadbolt::Client::connect(srv.url());
    auto held = a.acquire("cancel-local", {.ttl = 60s}, {.deadline = Clock::now()});
    std::stop_source stop;
    std::thread canceller([&] {
        std::this_thread::sleep_for(200ms);
        stop.request_stop();
    });
    std::error_code ec;
    auto l = a.acquire("cancel-local", {}, {.cancel = stop.get_token()}, ec);
    canceller.join();
    EXPECT_EQ(ec, deadbolt::errc::cancelled);
    EXPECT_FALSE(l);
}

TEST(Waiting, AWaiterThatThrowsLeavesTheLocalLineToTheOtherThreadsOfItsProcess) {
    RedisServer srv;
    auto other = deadbolt::Client::connect(srv.url());
    auto c = deadbolt::Client::connect(srv.url());
    auto held = other.acquire("throws", {.ttl = 60s}, {.deadline = Clock::now()});
    struct Refused {};
    deadbolt::AcquireOptions throwing;
    throwing.on_wait = [](const deadbolt::WaitInfo&) { throw Refused{}; };
    EXPECT_THROW(c.acquire("throws", {.ttl = 60s}, throwing), Refused);
    held.release();
    // Before, the thread that threw kept its turn in the process's line, so every later
    // thread of c waited behind it to its deadline ("held by another thread of this process").
    std::error_code ec;
    auto next = c.acquire("throws", {.ttl = 60s}, {.deadline = Clock::now() + 5s}, ec);
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_TRUE(next);
}

TEST(Waiting, AFairWaiterThatThrowsGivesUpItsPlaceInTheEnginesLine) {
    RedisServer srv;
    auto holder = deadbolt::Client::connect(srv.url());
    auto thrower = deadbolt::Client::connect(srv.url());
    auto next = deadbolt::Client::connect(srv.url());
    const auto fair = deadbolt::LockMode::fair;
    deadbolt::MutexOptions o;
    o.ttl = 60s;
    o.waiter_ttl = 30s;  // a place left behind would hold the line far past this test's wait
    auto held = holder.acquire("fair-throws", fair, o, {.deadline = Clock::now()});
    struct Refused {};
    deadbolt::AcquireOptions throwing;
    throwing.on_wait = [](const deadbolt::WaitInfo&) { throw Refused{}; };
    EXPECT_THROW(thrower.acquire("fair-throws", fair, o, throwing), Refused);
    held.release();
    deadbolt::Lease got;
    try {
        got = next.acquire("fair-throws", fair, o, {.deadline = Clock::now() + 5s});
    } catch (const deadbolt::LockError& e) {
        ADD_FAILURE() << "the thrower's place still stood first in line: " << e.what();
    }
    EXPECT_TRUE(got);
}

TEST(Waiting, ReleaserYieldsToTheWokenWaiterInsteadOfBargingBackIn) {
    RedisServer srv;
    auto a = deadbolt::Client::connect(srv.url());
    auto b = deadbolt::Client::connect(srv.url());
    // A grace far above any wake-up time, so the order below does not depend on timing.
    deadbolt::MutexOptions o{.ttl = 30s, .handoff_grace = 2s};
    auto held = a.acquire("polite", o, {.deadline = Clock::now()});
    std::mutex m;
    std::vector<std::string> order;
    std::thread waiter([&] {
        std::error_code ec;
        auto l = b.acquire("polite", o, {.deadline = Clock::now() + 3s}, ec);
        if (ec) return;  // barged past for good: the order below says so
        {
            std::lock_guard lk(m);
            order.push_back("b");
        }
        std::this_thread::sleep_for(50ms);
        l.release();
    });
    // The waiter listens once it stands in the name's line.
    for (int i = 0; i < 500 && srv.raw().cmd({"ZCARD", "{polite}:waiters"}).integer == 0; ++i)
        std::this_thread::sleep_for(10ms);
    held.release();
    auto again = a.acquire("polite", o, {.deadline = Clock::now() + 10s});  // right away
    {
        std::lock_guard lk(m);
        order.push_back("a");
    }
    if (order.size() == 1) again.release();  // a barged in: let the waiter give up
    waiter.join();
    EXPECT_EQ(order, (std::vector<std::string>{"b", "a"}));
    // With nobody waiting there is nothing to yield to: the next acquire is immediate.
    again.release();
    EXPECT_TRUE(a.acquire("polite", o, {.deadline = Clock::now()}).valid());
}

TEST(Waiting, AWaiterWithADeadlineRidesOutAServerRestart) {
    RedisServer srv;
    auto holder = deadbolt::Client::connect(srv.url());
    // Calls give up within 200 ms, so the outage (1 s) surfaces as errors to ride out, not
    // as one slow call that reconnects inside its own deadline.
    auto waiter = deadbolt::Client::connect(srv.url() + "?command_timeout=200ms");
    auto held = holder.acquire("blip", {.ttl = 20s});
    std::atomic<int> retries{0};
    // The waiter comes while the server is down (a waiter already waiting sleeps through the
    // outage until its client's subscriber is back, and so sees no error to ride out).
    srv.stop();  // a restart without persistence: the holder's key is gone with it
    auto got = std::async(std::launch::async, [&] {
        deadbolt::AcquireOptions how;
        how.deadline = Clock::now() + 30s;
        how.on_wait = [&](const deadbolt::WaitInfo& w) {
            if (w.retrying) ++retries;
        };
        return waiter.acquire("blip", {}, how);
    });
    std::this_thread::sleep_for(1s);
    srv.start();
    // Before, the first connection error ended the wait (ConnectionError) with 29 s left.
    auto lease = got.get();
    EXPECT_TRUE(lease.valid());
    EXPECT_GT(retries.load(), 0);
}

TEST(Waiting, WithoutADeadlineAConnectionErrorEndsTheWait) {
    RedisServer srv;
    auto holder = deadbolt::Client::connect(srv.url());
    auto waiter = deadbolt::Client::connect(srv.url());
    auto held = holder.acquire("blip", {.ttl = 20s});
    auto got = std::async(std::launch::async, [&] { return waiter.acquire("blip"); });
    std::this_thread::sleep_for(300ms);
    srv.stop();
    EXPECT_THROW(got.get(), deadbolt::ConnectionError);
}

TEST(Waiting, TheSubscriberStartsWithTheFirstHoldingOrTheFirstRealWait) {
    RedisServer srv;
    auto a = deadbolt::Client::connect(srv.url());
    const int before = srv.connections();
    EXPECT_TRUE(a.latch("open").wait_for(10ms)) << "a latch that is open needs no wait";
    (void)a.status("free-0");
    EXPECT_EQ(srv.connections(), before) << "nothing held or waited, so no subscriber connected";
    // A holder listens for force-unlock's notices (and keyspace events): one connection for the
    // client, however many it holds.
    for (int i = 0; i < 3; ++i) a.acquire("free-" + std::to_string(i)).release();
    for (auto until = Clock::now() + 10s; Clock::now() < until && srv.connections() == before;)
        std::this_thread::sleep_for(5ms);
    EXPECT_EQ(srv.connections(), before + 1) << "the holder's subscriber connected";
    auto held = a.acquire("busy");
    auto b = deadbolt::Client::connect(srv.url());
    const int with_b = srv.connections();
    std::thread waiter([&] { b.acquire("busy", {}, {.deadline = Clock::now() + 20s}); });
    for (auto until = Clock::now() + 10s; Clock::now() < until && srv.connections() == with_b;)
        std::this_thread::sleep_for(5ms);
    EXPECT_EQ(srv.connections(), with_b + 1) << "the waiter's subscriber connected";
    held.release();
    waiter.join();
}

using deadbolt::test::threads_of_this_process;

TEST(Waiting, ThreadsStartOnlyWhenNeeded) {
    RedisServer srv;
    const int before = threads_of_this_process();
    auto c = deadbolt::Client::connect(srv.url());  // an address: no resolver thread
    EXPECT_EQ(threads_of_this_process(), before);
    EXPECT_TRUE(c.latch("open").wait_for(10ms));
    EXPECT_EQ(threads_of_this_process(), before) << "no thread for a latch that is open";
    // The renewer and the subscriber (a holder hears of its loss at once) start with the first
    // lease.
    c.acquire("job").release();
    EXPECT_EQ(threads_of_this_process(), before + 2);
    c.acquire("job").release();
    EXPECT_EQ(threads_of_this_process(), before + 2) << "once per client";
    // A host name is still resolved (on Asio's resolver thread).
    deadbolt::Client::connect("redis://localhost:" + std::to_string(srv.port())).ping();
}
