// deadbolt's PostgreSQL locks seen from the server and from psql: the advisory key a name
// maps to, psql holding the same lock, waiting that runs no statements, status, list and
// force-unlock.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <thread>

#include "deadbolt/deadbolt.hpp"
#include "eventually.hpp"
#include "pg_server.hpp"

using namespace std::chrono_literals;
using deadbolt::Client;
using deadbolt::test::eventually;
using deadbolt::test::PgServer;
using Clock = std::chrono::steady_clock;

namespace {

std::string sql_text(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
    return out + "'";
}

// pg_locks' rows for name's key, as "mode granted pid" lines.
std::string locks_of(const PgServer& pg, const std::string& name) {
    std::string out;
    pg.psql(
        "SELECT mode, granted, pid FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1 "
        "AND (classid::bigint << 32 | objid::bigint) = deadbolt.key(" +
            sql_text(name) + ") ORDER BY granted DESC, pid",
        &out);
    return out;
}

TEST(PgInterop, TheKeyOfANameIsTheDocumentedSqlExpressionAndShowsInPgLocks) {
    auto& pg = PgServer::shared();
    auto c = Client::connect(pg.url());
    for (std::string name : {"orders:42", "ünïcode ✓", "x"}) {
        // The documented expression, spelled out here rather than through deadbolt.key().
        std::string expr;
        pg.psql("SELECT ('x' || left(encode(sha256(convert_to('deadbolt:' || " + sql_text(name) +
                    ", 'UTF8')), 'hex'), 16))::bit(64)::bigint",
                &expr);
        auto held = c.acquire(name);
        std::string seen;
        pg.psql(
            "SELECT classid::bigint << 32 | objid::bigint FROM pg_locks WHERE locktype = "
            "'advisory' AND objsubid = 1 AND granted AND pid <> pg_backend_pid()",
            &seen);
        EXPECT_NE(seen.find(expr), std::string::npos) << name << ": " << expr << " in " << seen;
    }
}

TEST(PgInterop, PsqlHoldingTheLockKeepsDeadboltOutUntilItsSessionEnds) {
    auto& pg = PgServer::shared();
    auto c = Client::connect(pg.url());
    const std::string name = "interop:psql-holds";
    // One psql session takes the lock the way another service would, holds it 1.5 s, and
    // ends (which frees it).
    auto psql = std::async(std::launch::async, [&] {
        return pg.psql("SELECT pg_advisory_lock(deadbolt.key(" + sql_text(name) +
                       ")); SELECT pg_sleep(1.5)");
    });
    ASSERT_TRUE(eventually([&] { return locks_of(pg, name).find("|t|") != std::string::npos; }));
    EXPECT_THROW(c.acquire(name, {}, {.deadline = Clock::now()}), deadbolt::LockError);
    auto got = c.acquire(name, {}, {.deadline = Clock::now() + 20s});
    EXPECT_EQ(psql.get(), 0);
    EXPECT_TRUE(got.valid());
}

TEST(PgInterop, DeadboltHoldingTheLockKeepsPsqlOut) {
    auto& pg = PgServer::shared();
    auto c = Client::connect(pg.url());
    const std::string name = "interop:deadbolt-holds";
    std::string out;
    {
        auto held = c.acquire(name);
        pg.psql("SELECT pg_try_advisory_lock(deadbolt.key(" + sql_text(name) + "))", &out);
        EXPECT_EQ(out, "f\n");
        auto reader = c.acquire(name + ":rw", deadbolt::LockMode::shared, {});
        pg.psql("SELECT pg_try_advisory_lock_shared(deadbolt.key(" + sql_text(name + ":rw") +
                    ")), pg_try_advisory_lock(deadbolt.key(" + sql_text(name + ":rw") + "))",
                &out);
        EXPECT_EQ(out, "t|f\n") << "a reader shares with psql's readers, not its writers";
    }
    pg.psql("SELECT pg_try_advisory_lock(deadbolt.key(" + sql_text(name) + "))", &out);
    EXPECT_EQ(out, "t\n");
}

TEST(PgWaiting, AWaiterRunsNoStatementWhileItWaitsAndGetsTheLockAtTheRelease) {
    auto& pg = PgServer::shared();
    auto a = Client::connect(pg.url()), b = Client::connect(pg.url());
    const std::string name = "waiting:quiet";
    auto held = a.acquire(name, {.ttl = 60s});
    auto waiter = std::async(std::launch::async,
                             [&] { return b.acquire(name, {}, {.deadline = Clock::now() + 30s}); });
    // The waiter's session waits inside the server on the advisory lock, one statement long.
    auto quiet = deadbolt::test::quiet_over(
        pg,
        "SELECT wait_event, query_start FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
        "AND query LIKE '%pg_advisory_lock(%'",
        "advisory|", 1500ms);
    ASSERT_FALSE(quiet.first.empty()) << "the waiter never waited in the server";
    EXPECT_EQ(quiet.then, quiet.first) << "the waiter ran another statement while it waited";
    held.release();
    EXPECT_TRUE(waiter.get().valid());
}

TEST(PgWaiting, AWaitLeavesNoLockTimeoutOnThePooledSession) {
    auto& pg = PgServer::shared();
    auto a = Client::connect(pg.url()), b = Client::connect(pg.url());
    auto held = a.acquire("waiting:timeout", {.ttl = 60s});
    auto releaser = std::async(std::launch::async, [&] {
        std::this_thread::sleep_for(100ms);
        held.release();
    });
    // b waits in the server with 400 ms left, gets the lock, and gives it back.
    b.acquire("waiting:timeout", {}, {.deadline = Clock::now() + 400ms}).release();
    releaser.get();
    // b's next statement runs on the session that waited; a row lock held for a second
    // must make it wait, not fail after the 400 ms the lock wait had.
    b.fenced_set("waiting:row", "1", 1);
    auto row_held = std::async(std::launch::async, [&] {
        return pg.psql(
            "BEGIN; SELECT 1 FROM deadbolt.fenced WHERE key = convert_to('waiting:row', 'UTF8') "
            "FOR UPDATE; SELECT pg_sleep(1.5); COMMIT");
    });
    ASSERT_TRUE(eventually([&] {
        std::string out;
        pg.psql(
            "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%FOR UPDATE; SELECT "
            "pg_sleep%' AND wait_event = 'PgSleep'",
            &out);
        return out == "1\n";
    }));
    EXPECT_TRUE(b.fenced_set("waiting:row", "2", 2).accepted);
    EXPECT_EQ(row_held.get(), 0);
}

TEST(PgAdmin, StatusListAndForceUnlockSeeTheServersLocks) {
    auto& pg = PgServer::shared();
    auto a = Client::connect(pg.url()), b = Client::connect(pg.url());
    const std::string name = std::string("admin:held\0bin\xff", 15);
    // Renewals come every 10 s: an evicted holder hears sooner only from the watch on its
    // session's socket.
    auto held = a.acquire(name, {.ttl = 30s});
    auto s = b.status(name);
    EXPECT_TRUE(s.held);
    EXPECT_EQ(s.kind, "mutex");
    ASSERT_EQ(s.held_by.size(), 1u);
    EXPECT_EQ(s.held_by[0].pid, ::getpid()) << "the holder's own process, not its backend's";
    auto waiter = std::async(std::launch::async,
                             [&] { return b.acquire(name, {}, {.deadline = Clock::now() + 30s}); });
    ASSERT_TRUE(eventually([&] { return b.status(name).waiters == 1; }));
    auto listed = b.list("*");
    bool found = false;
    for (const auto& l : listed) found |= l.name == name;
    EXPECT_TRUE(found) << "a binary name is listed as it was given";
    EXPECT_EQ(b.force_unlock(name), "mutex");
    EXPECT_TRUE(eventually([&] { return held.stop_token().stop_requested(); }, 5s))
        << "the holder heard of its ended session only at its renewal";
    auto got = waiter.get();
    EXPECT_GT(got.fence(), held.fence());
    EXPECT_FALSE(b.status("admin:never").held);
    EXPECT_EQ(b.force_unlock("admin:never"), "free");
}

TEST(PgAdmin, ALaterHoldingOfAPooledSessionIsHeardEndedAtOnceToo) {
    // The watch keeps a session's socket from its first holding until the session ends: the
    // holdings that reuse it from the pool are heard at once as well (renewals are 10 s away).
    auto& pg = PgServer::shared();
    auto a = Client::connect(pg.url()), b = Client::connect(pg.url());
    for (int i = 0; i < 3; ++i) a.acquire("admin:later", {.ttl = 30s}).release();
    auto held = a.acquire("admin:later", {.ttl = 30s});
    EXPECT_EQ(b.force_unlock("admin:later"), "mutex");
    EXPECT_TRUE(eventually([&] { return held.stop_token().stop_requested(); }, 5s))
        << "a holding on a pooled session heard of its end only at its renewal";
}

TEST(PgAdmin, AnExtendRightAfterTheSessionWasEndedReportsTheLossAtOnce) {
    // The termination races the statement (pg_terminate_backend returns before the backend is
    // gone), which then reads as an unknown outcome; but the session, and the lock with it,
    // is gone either way.
    auto& pg = PgServer::shared();
    auto a = Client::connect(pg.url()), b = Client::connect(pg.url());
    for (int i = 0; i < 5; ++i) {
        auto name = "admin:extend-after-end:" + std::to_string(i);
        auto held = a.acquire(name, {.ttl = 30s});
        EXPECT_EQ(b.force_unlock(name), "mutex");
        try {
            held.extend(30s);
            ADD_FAILURE() << "extended a lease whose session was ended";
        } catch (const deadbolt::Error& e) {
            EXPECT_EQ(e.code(), deadbolt::errc::not_owner) << e.what();
        }
        EXPECT_TRUE(held.lost()) << "the loss waited for the next renewal";
    }
}

TEST(PgAdmin, ACheckOrGuardedWriteRightAfterTheSessionWasEndedTellsTheLossAtOnce) {
    // As for extend: the statement races the termination; the lease is lost either way, and
    // its holder hears it now, not at its renewal (10 s away with this TTL).
    auto& pg = PgServer::shared();
    auto a = Client::connect(pg.url()), b = Client::connect(pg.url());
    for (int i = 0; i < 6; ++i) {
        auto name = "admin:check-after-end:" + std::to_string(i);
        auto held = a.acquire(name, {.ttl = 30s});
        EXPECT_EQ(b.force_unlock(name), "mutex");
        std::error_code ec;
        bool ours = i % 2 == 0 ? held.is_current(ec) : held.put_if_current(name + ":data", "x", ec);
        EXPECT_FALSE(ours && !ec) << "a lease whose session ended is not current";
        EXPECT_TRUE(eventually([&] { return held.lost(); }, 3s))
            << "the loss waited for the next renewal";
    }
}

TEST(PgAdmin, StatusShowsTheFenceHowTheHoldingEndsAndWhoAForeignHolderIs) {
    auto& pg = PgServer::shared();
    auto a = Client::connect(pg.url()), b = Client::connect(pg.url());
    auto held = a.acquire("truth:held", {.ttl = 30s});
    auto s = b.status("truth:held");
    EXPECT_EQ(s.last_fence, held.fence()) << "the fence its session's name carries";
    EXPECT_EQ(s.session_timeout, 30s) << "it ends with its session, after 30 s of silence";
    EXPECT_EQ(s.ttl, -1ms);
    ASSERT_EQ(s.held_by.size(), 1u);
    EXPECT_EQ(s.held_by[0].pid, ::getpid());
    EXPECT_FALSE(s.held_by[0].host.empty());
    EXPECT_TRUE(s.held_by[0].client.empty());
    // A grant after a wait, a MultiLock's names, a reader: each as it was taken.
    auto waited = std::async(std::launch::async, [&] {
        return b.acquire("truth:held", {.ttl = 15s}, {.deadline = Clock::now() + 30s});
    });
    ASSERT_TRUE(eventually([&] { return a.status("truth:held").waiters == 1; }));
    held.release();
    auto got = waited.get();
    auto after = a.status("truth:held");
    EXPECT_EQ(after.last_fence, got.fence());
    EXPECT_EQ(after.session_timeout, 15s);
    auto both = a.acquire_all({"truth:m1", "truth:m2"}, {.ttl = 20s});
    EXPECT_EQ(b.status("truth:m2").last_fence, both.fence());
    auto reader = a.acquire("truth:read", deadbolt::LockMode::shared, {.ttl = 10s});
    auto read = b.status("truth:read");
    EXPECT_EQ(read.kind, "readers");
    EXPECT_EQ(read.session_timeout, 10s);
    EXPECT_EQ(read.last_fence, 0u);
    // psql's session: named as psql's, with no host or pid of deadbolt's.
    auto psql = std::async(std::launch::async, [&] {
        return pg.psql("SELECT pg_advisory_lock(deadbolt.key('truth:psql')), pg_sleep(2)");
    });
    ASSERT_TRUE(eventually([&] { return b.status("truth:psql").held; }));
    auto foreign = b.status("truth:psql");
    ASSERT_EQ(foreign.held_by.size(), 1u);
    EXPECT_TRUE(foreign.held_by[0].host.empty());
    EXPECT_NE(foreign.held_by[0].client.find("'psql' session from"), std::string::npos)
        << foreign.held_by[0].client;
    EXPECT_EQ(foreign.session_timeout, 0ms);
    EXPECT_EQ(foreign.last_fence, 0u);
    EXPECT_EQ(psql.get(), 0);
}

TEST(PgFenced, AStaleFenceAndAMovedVersionWriteNothing) {
    auto& pg = PgServer::shared();
    auto c = Client::connect(pg.url());
    auto r = c.fenced_set("fenced:stock", "10", 5);
    EXPECT_TRUE(r.accepted);
    auto stale = c.fenced_set("fenced:stock", "9", 4);
    EXPECT_FALSE(stale.accepted);
    EXPECT_TRUE(stale.stale_fence);
    auto v = c.fenced_get("fenced:stock");
    EXPECT_EQ(v.value, "10");
    EXPECT_TRUE(c.fenced_cas("fenced:stock", "8", 6, v.version).accepted);
    auto moved = c.fenced_cas("fenced:stock", "7", 6, v.version);
    EXPECT_FALSE(moved.accepted);
    EXPECT_FALSE(moved.stale_fence);
    EXPECT_EQ(c.fenced_get("fenced:stock").value, "8");
    std::string rows;
    pg.psql(
        "SELECT convert_from(value, 'UTF8'), fence, version FROM deadbolt.fenced WHERE key = "
        "convert_to('fenced:stock', 'UTF8')",
        &rows);
    EXPECT_EQ(rows, "8|6|2\n");
}

TEST(PgGuarded, AWriteGuardedByTheLockLandsOnlyWhileItsSessionHoldsIt) {
    auto& pg = PgServer::shared();
    auto a = Client::connect(pg.url()), b = Client::connect(pg.url());
    auto held = a.acquire("guarded:lock", {.ttl = 1s});
    EXPECT_TRUE(held.put_if_current("guarded:data", "first"));
    EXPECT_EQ(b.fenced_get("guarded:data").value, "first");
    // An operator ends the holder's session: its next guarded write lands nowhere.
    pg.psql(
        "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND "
        "granted AND objsubid = 1 AND (classid::bigint << 32 | objid::bigint) = "
        "deadbolt.key('guarded:lock')");
    // A write racing the session's end may not know whether it landed (unknown_outcome, as
    // documented); the next one finds the session gone and writes nothing.
    EXPECT_TRUE(eventually([&] {
        std::error_code ec;
        bool put = held.put_if_current("guarded:data", "late", ec);
        return !put && !ec;
    }));
    EXPECT_TRUE(held.lost());
    auto next = b.acquire("guarded:lock", {}, {.deadline = Clock::now() + 10s});
    EXPECT_TRUE(next.put_if_current("guarded:data", "second"));
    EXPECT_EQ(b.fenced_get("guarded:data").value, "second");
}

}  // namespace
