// The primitives PostgreSQL keeps as rows, seen from the server. A Semaphore: permits are
// rows of deadbolt.permits that psql can read; waiters line up at the gate (an advisory lock) in
// arrival order, where only the first listens and the rest run nothing but their wait; a waiter
// that gives up hands the gate on at once; a holder whose process vanished gives its permit back at
// its TTL; clients that disagree on the count are refused. A CountDownLatch: waiters listen and run
// nothing while they wait; the last count-down wakes them, and so does the latch's TTL. A
// LeaderElection: psql reads the leader's row; a leader ended from the server's side with
// nobody to succeed it wakes its observers at its TTL, and a successor at once. A
// ReentrantMutex: its row counts the owner's holds, and the owner re-enters past a waiter
// that stands at the gate.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "deadbolt/deadbolt.hpp"
#include "eventually.hpp"
#include "pg_server.hpp"
#include "redis_server.hpp"  // run_command

using namespace std::chrono_literals;
using deadbolt::Client;
using deadbolt::test::eventually;
using deadbolt::test::PgServer;
using Clock = std::chrono::steady_clock;

namespace {

// How many sessions wait in the server for the gate of name, and how many listen past it
// (idle after a count made at the gate: take_permit's at_gate argument true).
struct Line {
    int at_gate_queue = 0;
    int listening = 0;
};
Line line_of(const PgServer& pg, const std::string& name) {
    const std::string key = "deadbolt.key('" + name + "')";
    std::string out;
    pg.psql(
        "SELECT (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
        "AND objsubid = 1 AND (classid::bigint << 32 | objid::bigint) = " +
            key +
            ") || ' ' || (SELECT count(*) FROM pg_stat_activity WHERE state = 'idle' AND "
            "query ~ ('take_permit\\(' || " +
            key + " || ', -?[0-9]+, ''[^'']*''::bytea, [0-9]+, true,'))",
        &out);
    Line l;
    std::sscanf(out.c_str(), "%d %d", &l.at_gate_queue, &l.listening);
    return l;
}

}  // namespace

TEST(PgSemaphore, PermitsAreRowsPsqlCanRead) {
    auto& pg = PgServer::shared();
    auto c = Client::connect(pg.url());
    auto sem = c.permit_semaphore("sem:rows", 3);
    auto p1 = sem.acquire(), p2 = sem.acquire();
    std::string out;
    pg.psql(
        "SELECT count(*) FROM deadbolt.permits WHERE key = deadbolt.key('sem:rows') AND "
        "expires > clock_timestamp()",
        &out);
    EXPECT_EQ(out, "2\n");
    EXPECT_EQ(sem.available(), 1);
    p1.release();
    pg.psql(
        "SELECT convert_from(id, 'UTF8') FROM deadbolt.permits WHERE key = "
        "deadbolt.key('sem:rows')",
        &out);
    EXPECT_EQ(out, p2.token() + "\n");  // the row's id is the permit's id
}

TEST(PgSemaphore, WaitersAreServedInArrivalOrderAndOnlyTheFirstListens) {
    auto& pg = PgServer::shared();
    const std::string name = "sem:order";
    auto holder = Client::connect(pg.url());
    auto held = holder.permit_semaphore(name, 1, {.ttl = 60s}).acquire();
    std::vector<Client> clients;
    for (int i = 0; i < 3; ++i) clients.push_back(Client::connect(pg.url()));
    std::mutex m;
    std::vector<int> order;
    std::vector<std::future<void>> waiters;
    for (int i = 0; i < 3; ++i) {
        waiters.push_back(std::async(std::launch::async, [&, i] {
            auto p = clients[static_cast<std::size_t>(i)].permit_semaphore(name, 1).acquire(
                {.deadline = Clock::now() + 30s});
            {
                std::lock_guard lock(m);
                order.push_back(i);
            }
            p.release();
        }));
        // The next one comes once this one is in line: the first at the gate, listening,
        // the others in the server's queue for it.
        ASSERT_TRUE(eventually([&] {
            auto l = line_of(pg, name);
            return l.listening == 1 && l.at_gate_queue == i;
        })) << "waiter "
            << i;
    }
    held.release();
    for (auto& w : waiters) w.get();
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
}

TEST(PgSemaphore, AWaiterThatGivesUpAtTheGateLetsTheNextIn) {
    auto& pg = PgServer::shared();
    const std::string name = "sem:giveup";
    auto a = Client::connect(pg.url()), b = Client::connect(pg.url()),
         c = Client::connect(pg.url());
    auto held = a.permit_semaphore(name, 1, {.ttl = 60s}).acquire();
    // b reaches the gate and gives up there; c waits behind it.
    auto gives_up = std::async(std::launch::async, [&] {
        std::error_code ec;
        return b.permit_semaphore(name, 1).acquire({.deadline = Clock::now() + 1500ms}, ec).valid();
    });
    ASSERT_TRUE(eventually([&] { return line_of(pg, name).listening == 1; }));
    auto deadline = Clock::now() + 20s;
    auto next = std::async(std::launch::async, [&] {
        return c.permit_semaphore(name, 1).acquire({.deadline = deadline});
    });
    EXPECT_FALSE(gives_up.get());
    // c is at the gate now; a release wakes it long before its deadline.
    ASSERT_TRUE(eventually([&] { return line_of(pg, name).listening == 1; }));
    held.release();
    auto got = next.get();
    EXPECT_TRUE(got.valid());
    EXPECT_LT(Clock::now(), deadline);
}

TEST(PgSemaphore, APermitOfAVanishedProcessComesBackAtItsTtl) {
    auto& pg = PgServer::shared();
    const std::string name = "sem:vanished";
    auto c = Client::connect(pg.url());
    // A permit held by no live client: its row, as a killed holder leaves it.
    pg.psql("INSERT INTO deadbolt.permits VALUES (deadbolt.key('" + name +
            "'), 'gone', clock_timestamp() + interval '1 second', 1, 1, 0)");
    auto sem = c.permit_semaphore(name, 1);
    EXPECT_FALSE(sem.try_acquire());
    auto got = sem.acquire({.deadline = Clock::now() + 15s});
    EXPECT_TRUE(got.valid());
}

TEST(PgSemaphore, ClientsThatDisagreeOnThePermitCountAreRefused) {
    auto& pg = PgServer::shared();
    auto a = Client::connect(pg.url()), b = Client::connect(pg.url());
    auto held = a.permit_semaphore("sem:agree", 3).acquire();
    try {
        b.permit_semaphore("sem:agree", 2).try_acquire();
        ADD_FAILURE() << "a client that asked for 2 permits of a semaphore of 3";
    } catch (const deadbolt::UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("has 3 permits but this client asked for 2"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_TRUE(b.permit_semaphore("sem:agree", 3).try_acquire());
    held.release();
}

TEST(PgLatch, WaitersRunNothingUntilTheLastCountDownWakesThem) {
    auto& pg = PgServer::shared();
    auto a = Client::connect(pg.url()), b = Client::connect(pg.url());
    auto la = a.latch("latch:quiet");
    ASSERT_TRUE(la.try_set_count(2));
    std::vector<std::future<bool>> waiters;
    for (int i = 0; i < 3; ++i)
        waiters.push_back(
            std::async(std::launch::async, [&] { return b.latch("latch:quiet").wait_for(30s); }));
    // Each waiter's session listens, idle since its LISTEN: no statement while it waits.
    auto quiet = deadbolt::test::quiet_over(
        pg,
        "SELECT count(*), max(state_change) FROM pg_stat_activity WHERE state = 'idle' AND "
        "query LIKE 'LISTEN \"deadbolt_latch_%'",
        "3|", 1s);
    ASSERT_FALSE(quiet.first.empty()) << "the waiters never listened";
    EXPECT_EQ(quiet.then, quiet.first) << "a waiter ran a statement while it waited";
    EXPECT_FALSE(la.count_down());
    for (auto& w : waiters) EXPECT_EQ(w.wait_for(200ms), std::future_status::timeout);
    EXPECT_TRUE(la.count_down());
    for (auto& w : waiters) EXPECT_TRUE(w.get());
    std::string rows;
    pg.psql("SELECT count(*) FROM deadbolt.latches WHERE key = deadbolt.key('latch:quiet')", &rows);
    EXPECT_EQ(rows, "0\n");
}

TEST(PgLatch, ALatchOpensByItselfAtItsTtlAndWakesItsWaiters) {
    auto& pg = PgServer::shared();
    auto c = Client::connect(pg.url());
    auto l = c.latch("latch:ttl");
    ASSERT_TRUE(l.try_set_count(5, 1s));
    EXPECT_EQ(l.count(), 5);
    auto t0 = Clock::now();
    EXPECT_TRUE(l.wait_for(20s));
    EXPECT_GE(Clock::now() - t0, 500ms);
    EXPECT_EQ(l.count(), 0);
    EXPECT_TRUE(l.try_set_count(1)) << "an expired latch is open, and may be set again";
}

TEST(PgElection, PsqlReadsTheLeaderAndAnEndedLeaderWakesItsObservers) {
    auto& pg = PgServer::shared();
    auto a = Client::connect(pg.url()), b = Client::connect(pg.url());
    auto ea = a.election("elect:ended", {.ttl = 2s});
    auto term = ea.campaign("10.0.0.1:80").fence();
    std::string out;
    pg.psql(
        "SELECT convert_from(value, 'UTF8'), term FROM deadbolt.leaders WHERE key = "
        "deadbolt.key('elect:ended')",
        &out);
    EXPECT_EQ(out, "10.0.0.1:80|" + std::to_string(term) + "\n");
    auto eb = b.election("elect:ended");
    auto seen = eb.leader();
    ASSERT_TRUE(seen.elected);
    // The leader's session is ended by an operator: nothing is announced, and no candidate
    // waits; the observer wakes at the leader's TTL and sees nobody leading.
    auto deadline = Clock::now() + 20s;
    auto observed =
        std::async(std::launch::async, [&] { return eb.observe(seen, {.deadline = deadline}); });
    std::this_thread::sleep_for(200ms);
    pg.psql(
        "SELECT pg_terminate_backend(pid) FROM deadbolt.leaders WHERE key = "
        "deadbolt.key('elect:ended')");
    auto now = observed.get();
    EXPECT_LT(Clock::now(), deadline);
    EXPECT_FALSE(now.elected);
    // A candidate that waits gets the term at once, with a higher term.
    auto& mine = eb.campaign("10.0.0.2:80", {.deadline = Clock::now() + 10s});
    EXPECT_GT(mine.fence(), term);
    EXPECT_EQ(a.election("elect:ended").leader().value, "10.0.0.2:80");
}

TEST(PgReentrant, TheOwnerReentersPastAWaiterAtTheGate) {
    auto& pg = PgServer::shared();
    auto a = Client::connect(pg.url()), b = Client::connect(pg.url());
    auto mine = a.reentrant_mutex("reentrant:gate", {.ttl = 60s}, "owner-a");
    auto theirs = b.reentrant_mutex("reentrant:gate", {}, "owner-b");
    mine.lock();
    auto waiter = std::async(std::launch::async, [&] { return theirs.try_lock_for(20s); });
    ASSERT_TRUE(eventually([&] { return line_of(pg, "reentrant:gate").listening == 1; }));
    // The waiter holds the gate; the owner's second lock must not wait for it.
    EXPECT_TRUE(mine.try_lock());
    std::string holds;
    pg.psql("SELECT holds FROM deadbolt.permits WHERE key = deadbolt.key('reentrant:gate')",
            &holds);
    EXPECT_EQ(holds, "2\n");
    mine.unlock();
    EXPECT_EQ(waiter.wait_for(300ms), std::future_status::timeout) << "one hold is left";
    mine.unlock();
    EXPECT_TRUE(waiter.get());
    theirs.unlock();
}

TEST(PgRows, StatusAndListSeeSemaphoresReentrantLocksAndLeaders) {
    auto& pg = PgServer::shared();
    auto c = Client::connect(pg.url()), other = Client::connect(pg.url());
    auto p1 = c.permit_semaphore("status:sem", 3, {.ttl = 20s}).acquire();
    auto p2 = other.permit_semaphore("status:sem", 3, {.ttl = 20s}).acquire();
    auto sem = other.status("status:sem");
    EXPECT_EQ(sem.kind, "semaphore");
    EXPECT_EQ(sem.permits, 3);
    EXPECT_EQ(sem.holders, 2);
    ASSERT_EQ(sem.held_by.size(), 2u);
    EXPECT_EQ(sem.held_by[0].pid, static_cast<int>(::getpid()));
    EXPECT_GT(sem.ttl, 10s);
    auto re = c.reentrant_mutex("status:re", {}, "owner-s");
    re.lock();
    re.lock();
    auto rs = other.status("status:re");
    EXPECT_EQ(rs.kind, "reentrant");
    EXPECT_EQ(rs.holders, 1);
    EXPECT_EQ(rs.last_fence, re.lease().fence());
    auto e = c.election("status:lead");
    auto term = e.campaign("10.0.0.9:80").fence();
    auto ls = other.status("status:lead");
    EXPECT_EQ(ls.kind, "leader");
    EXPECT_EQ(ls.value, "10.0.0.9:80");
    EXPECT_EQ(ls.last_fence, term);
    std::vector<std::string> names;
    for (const auto& l : other.list("status:*")) names.push_back(l.name);
    EXPECT_EQ(names, (std::vector<std::string>{"status:lead", "status:re", "status:sem"}));
    re.unlock();
    re.unlock();
}

TEST(PgSemaphore, ManyTakersAtOnceNeverHoldMoreThanN) {
    auto& pg = PgServer::shared();
    // The gate hands over to the next taker while the last one's insert may not be
    // committed yet: the count must still see it.
    std::atomic<int> holding{0}, peak{0}, taken{0}, missed{0};
    std::vector<std::thread> takers;
    auto until = Clock::now() + 3s;
    for (int i = 0; i < 8; ++i)
        takers.emplace_back([&] {
            auto c = Client::connect(pg.url());
            auto sem = c.permit_semaphore("sem:race", 2);
            while (Clock::now() < until) {
                std::error_code ec;
                auto p = sem.acquire({.deadline = Clock::now() + 10s}, ec);
                if (!p.valid()) {  // a waiter left waiting for 10 s: a wake-up was missed
                    ++missed;
                    continue;
                }
                int now = ++holding;
                for (int seen = peak.load();
                     now > seen && !peak.compare_exchange_weak(seen, now);) {
                }
                ++taken;
                std::this_thread::sleep_for(2ms);
                --holding;
                p.release();
            }
        });
    for (auto& t : takers) t.join();
    EXPECT_LE(peak.load(), 2) << "of " << taken.load() << " permits taken";
    EXPECT_EQ(missed.load(), 0);
    EXPECT_GT(taken.load(), 50);
}

#ifdef DEADBOLT_CLI
TEST(PgCli, RunTakesAPermitAndHandsTheCommandNoneOfTheClientsDescriptors) {
    auto& pg = PgServer::shared();
    std::string without, with;
    deadbolt::test::run_command({"ls", "/proc/self/fd"}, &without);
    auto c = Client::connect(pg.url());
    auto other = c.permit_semaphore("cli:sem", 2).acquire();
    EXPECT_EQ(deadbolt::test::run_command({DEADBOLT_CLI, "run", "--url", pg.url(), "--permits", "2",
                                           "--no-wait", "cli:sem", "--", "ls", "/proc/self/fd"},
                                          &with),
              0)
        << with;
    EXPECT_EQ(with, without) << "a descriptor of deadbolt's leaked into the command";
    // The second permit is free again: the run gave it back when its command ended.
    EXPECT_TRUE(c.permit_semaphore("cli:sem", 2).try_acquire());
}

TEST(PgCli, InitMakesTheSchemaAndOthersAreToldWhatToGrant) {
    auto& pg = PgServer::shared();
    std::string out;
    EXPECT_EQ(deadbolt::test::run_command(
                  {DEADBOLT_CLI, "init", "--url", pg.url() + "?schema=made_by_init"}, &out),
              0)
        << out;
    std::string layout;
    pg.psql("SELECT to_regprocedure('made_by_init.layout_3()') IS NOT NULL", &layout);
    EXPECT_EQ(layout, "t\n");
    ASSERT_EQ(pg.psql("CREATE ROLE initless LOGIN PASSWORD 'pw'"), 0);
    auto url = "postgresql://initless:pw@127.0.0.1:" + std::to_string(pg.port()) +
               "/deadbolt?schema=not_made";
    EXPECT_NE(deadbolt::test::run_command({DEADBOLT_CLI, "init", "--url", url}, &out), 0);
    EXPECT_NE(out.find("GRANT CREATE ON DATABASE deadbolt TO initless"), std::string::npos) << out;
}
#endif
