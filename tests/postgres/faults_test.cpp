// What real faults and bad input do to deadbolt's PostgreSQL locks: a holder cut off past its
// TTL, the server restarted, wrong passwords, missing databases and rights, a read-only role.
#include <gtest/gtest.h>

#include <signal.h>

#include <thread>

#include "deadbolt/deadbolt.hpp"
#include "eventually.hpp"
#include "pg_server.hpp"
#include "refusal.hpp"
#include "tcp_proxy.hpp"

using namespace std::chrono_literals;
using deadbolt::Client;
using deadbolt::test::eventually;
using deadbolt::test::PgServer;
using deadbolt::test::refusal;
using deadbolt::test::TcpProxy;
using Clock = std::chrono::steady_clock;

namespace {

TEST(PgFaults, AHolderCutOffPastItsTtlLosesTheLockToAWaiterAndItsFencedWriteIsRefused) {
    auto& pg = PgServer::shared();
    TcpProxy proxy(pg.port());
    auto cut_off = Client::connect(pg.url_via(proxy.port()));
    auto other = Client::connect(pg.url());
    const std::string name = "faults:cut-off";
    auto held = cut_off.acquire(name, {.ttl = 1s});
    EXPECT_TRUE(other.fenced_set("faults:cut-off:data", "old", held.fence()).accepted);
    proxy.stall_requests(true);  // the holder's renewals no longer reach the server
    proxy.stall_replies(true);
    // The server ends the silent session after its 1 s idle timeout and hands the lock over.
    auto next = other.acquire(name, {}, {.deadline = Clock::now() + 20s});
    EXPECT_GT(next.fence(), held.fence());
    EXPECT_TRUE(eventually([&] { return held.stop_token().stop_requested(); }));
    EXPECT_TRUE(other.fenced_set("faults:cut-off:data", "new", next.fence()).accepted);
    // The holder, back, is refused: its fence is older than the one that wrote last.
    proxy.stall_requests(false);
    proxy.stall_replies(false);
    auto late = other.fenced_set("faults:cut-off:data", "stale", held.fence());
    EXPECT_FALSE(late.accepted);
    EXPECT_TRUE(late.stale_fence);
    EXPECT_EQ(other.fenced_get("faults:cut-off:data").value, "new");
}

TEST(PgFaults, AReentrantReleaseSentAgainLateSparesTheOwnersNextHolding) {
    // An owner's token is the same from one holding to the next. A release whose answer is
    // held back must not take the owner's next holding (a new row, a new fence): an owner
    // given by the user is not sent again (another client may hold through it), and one sent
    // again would touch only the row with its grant's fence.
    auto& pg = PgServer::shared();
    TcpProxy slow(pg.port());
    auto a = Client::connect(pg.url_via(slow.port(), "?command_timeout=300ms"));
    auto b = Client::connect(pg.url());
    const std::string name = "faults:reentrant-late-release";
    auto ma = a.reentrant_mutex(name, {}, "one-owner");
    auto mb = b.reentrant_mutex(name, {}, "one-owner");
    ma.lock();
    slow.stall_replies(true);
    ma.unlock();  // it ran; its answer is held back
    mb.lock();    // the same owner afresh, on another client
    slow.stall_replies(false);
    std::this_thread::sleep_for(2s);  // a release sent again would come 20 ms..1 s apart
    EXPECT_TRUE(mb.lease().is_current())
        << "a release sent again late took the owner's next holding";
    mb.unlock();
}

TEST(PgFaults, ARestartedServerEndsEveryHoldingAndTheClientCarriesOn) {
    PgServer pg;  // of its own: it is restarted
    auto c = Client::connect(pg.url());
    auto held = c.acquire("faults:restart", {.ttl = 2s});
    pg.stop(SIGKILL);
    pg.start();
    EXPECT_TRUE(eventually([&] { return held.stop_token().stop_requested(); }, 20s));
    EXPECT_TRUE(held.lost());
    auto again = c.acquire("faults:restart", {}, {.deadline = Clock::now() + 20s});
    EXPECT_GT(again.fence(), held.fence()) << "the fence sequence never goes back";
}

TEST(PgFaults, TheDocumentedFencedUpdateOfAUsersRowRefusesAStaleHolder) {
    auto& pg = PgServer::shared();
    ASSERT_EQ(pg.psql("CREATE TABLE stock (sku text PRIMARY KEY, qty int, fence bigint, version "
                      "bigint); INSERT INTO stock VALUES ('a', 10, 0, 0); GRANT ALL ON stock TO "
                      "deadbolt"),
              0);
    TcpProxy proxy(pg.port());
    auto cut_off = Client::connect(pg.url_via(proxy.port()));
    auto other = Client::connect(pg.url());
    auto stale = cut_off.acquire("stock:a", {.ttl = 1s});
    proxy.stall_requests(true);
    proxy.stall_replies(true);
    auto next = other.acquire("stock:a", {}, {.deadline = Clock::now() + 20s});
    // README, "Databases": the fence and the version read go into the UPDATE itself.
    auto update = [&](std::uint64_t fence, const std::string& version) {
        std::string rows;
        pg.psql(
            "WITH u AS (UPDATE stock SET qty = qty - 1, fence = " + std::to_string(fence) +
                ", version = version + 1 WHERE sku = 'a' AND fence <= " + std::to_string(fence) +
                " AND version = " + version + " RETURNING 1) SELECT count(*) FROM u",
            &rows);
        return rows;
    };
    EXPECT_EQ(update(next.fence(), "0"), "1\n") << "the holder's write lands";
    EXPECT_EQ(update(stale.fence(), "1"), "0\n") << "the stale holder's write updates 0 rows";
    EXPECT_EQ(update(next.fence(), "0"), "0\n") << "a moved version updates 0 rows";
    std::string row;
    pg.psql("SELECT qty, fence, version FROM stock", &row);
    EXPECT_EQ(row, "9|" + std::to_string(next.fence()) + "|1\n");
    proxy.stall_requests(false);
    proxy.stall_replies(false);
}

TEST(PgSchema, ASchemaOfAnotherLayoutIsMadeAgain) {
    auto& pg = PgServer::shared();
    Client::connect(pg.url());
    // What an older deadbolt left: a function with another body, and no marker of this
    // layout.
    ASSERT_EQ(pg.psql("DROP FUNCTION deadbolt.layout_3(); CREATE OR REPLACE FUNCTION "
                      "deadbolt.release_permit(p_key bigint, p_id bytea) RETURNS boolean "
                      "LANGUAGE sql AS $$ SELECT false $$"),
              0);
    auto c = Client::connect(pg.url());
    auto sem = c.permit_semaphore("layout:sem", 1);
    auto p = sem.acquire();
    EXPECT_TRUE(sem.release(p.token())) << "release_permit kept the old body";
}

TEST(PgBadInput, WrongPasswordMissingDatabaseAndBadUrlsSayWhatIsWrong) {
    auto& pg = PgServer::shared();
    auto port = std::to_string(pg.port());
    auto wrong =
        refusal<deadbolt::Error>("postgresql://deadbolt:nope@127.0.0.1:" + port + "/deadbolt");
    EXPECT_NE(wrong.find("password authentication failed"), std::string::npos) << wrong;
    auto missing =
        refusal<deadbolt::Error>("postgresql://deadbolt:s3cret@127.0.0.1:" + port + "/nosuchdb");
    EXPECT_NE(missing.find("does not exist"), std::string::npos) << missing;
    auto option = refusal<deadbolt::UsageError>(pg.url("?scheme=x"));
    EXPECT_NE(option.find("unknown PostgreSQL URL option 'scheme'"), std::string::npos) << option;
    auto schema = refusal<deadbolt::UsageError>(pg.url("?schema=Bad-Name"));
    EXPECT_NE(schema.find("schema 'Bad-Name'"), std::string::npos) << schema;
    auto dead = refusal<deadbolt::ConnectionError>("postgresql://u:p@127.0.0.1:1/db");
    EXPECT_NE(dead.find("cannot connect to PostgreSQL"), std::string::npos) << dead;
}

TEST(PgBadInput, AUserWithoutRightsIsToldWhichToGrantAndGetsInOnceGranted) {
    auto& pg = PgServer::shared();
    ASSERT_EQ(pg.psql("CREATE ROLE app LOGIN PASSWORD 'pw'"), 0);
    auto url = "postgresql://app:pw@127.0.0.1:" + std::to_string(pg.port()) + "/deadbolt";
    // The schema's owner made it already (another test's client); app may not use it.
    Client::connect(pg.url());
    auto why = refusal<deadbolt::Error>(url + "?schema=apps");
    EXPECT_NE(why.find("GRANT CREATE ON DATABASE deadbolt TO app"), std::string::npos) << why;
    // Rights on the shared schema: the message's statements, run as they are.
    auto from = why.find("then: "), to = why.find(" (functions");
    ASSERT_TRUE(from != std::string::npos && to != std::string::npos) << why;
    auto grants = why.substr(from + 6, to - from - 6);
    for (auto at = grants.find("apps."); at != std::string::npos; at = grants.find("apps."))
        grants.replace(at, 4, "deadbolt");
    for (auto at = grants.find("SCHEMA apps"); at != std::string::npos;
         at = grants.find("SCHEMA apps"))
        grants.replace(at + 7, 4, "deadbolt");
    ASSERT_EQ(pg.psql(grants), 0) << grants;
    auto c = Client::connect(url);
    EXPECT_GT(c.acquire("rights:granted").fence(), 0u);
    EXPECT_TRUE(c.permit_semaphore("rights:sem", 2).try_acquire());
    EXPECT_TRUE(
        c.rate_limiter("rights:rate", {.rate = 1, .per = 1s, .burst = 1}).try_acquire().allowed);
    std::string out;
    pg.psql("SELECT count(*) FROM pg_namespace WHERE nspname = 'apps'", &out);
    EXPECT_EQ(out, "0\n") << "nothing was left behind by the refused connect";
}

TEST(PgBadInput, AReadOnlyRoleIsRefusedAsReadOnly) {
    auto& pg = PgServer::shared();
    Client::connect(pg.url());  // the schema exists
    ASSERT_EQ(pg.psql("CREATE ROLE ro LOGIN PASSWORD 'pw'; ALTER ROLE ro SET "
                      "default_transaction_read_only = on; GRANT USAGE ON SCHEMA deadbolt TO ro; "
                      "GRANT USAGE ON SEQUENCE deadbolt.fences TO ro; GRANT SELECT, INSERT, "
                      "UPDATE ON deadbolt.names, deadbolt.fenced TO ro"),
              0);
    auto c =
        Client::connect("postgresql://ro:pw@127.0.0.1:" + std::to_string(pg.port()) + "/deadbolt");
    try {
        c.acquire("readonly:x", {}, {.deadline = Clock::now() + 2s});
        ADD_FAILURE() << "a read-only session handed out a fence";
    } catch (const deadbolt::Error& e) {
        EXPECT_EQ(e.code(), deadbolt::make_error_code(deadbolt::errc::readonly)) << e.what();
    }
    std::string out;
    pg.psql(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1 AND "
        "(classid::bigint << 32 | objid::bigint) = deadbolt.key('readonly:x')",
        &out);
    EXPECT_EQ(out, "0\n") << "the refused attempt left its lock behind";
}

TEST(PgBadInput, BinaryAndLongNamesAreLocksOfTheirOwn) {
    auto& pg = PgServer::shared();
    auto c = Client::connect(pg.url());
    std::string binary("a\0b", 3), other("a\0c", 3), long_name(4096, 'n');
    auto one = c.acquire(binary);
    auto two = c.acquire(other, {}, {.deadline = Clock::now()});
    auto three = c.acquire(long_name, {}, {.deadline = Clock::now()});
    EXPECT_THROW(c.acquire(binary, {}, {.deadline = Clock::now()}), deadbolt::LockError);
    EXPECT_THROW(c.acquire(std::string(), {}, {.deadline = Clock::now()}), deadbolt::UsageError);
}

}  // namespace
