// deadbolt's MariaDB locks seen from the server and from the mariadb client: the GET_LOCK
// name a lock name maps to, the client holding the same lock, waiting that runs no
// statements, status, list and force-unlock; faults (a holder cut off past its TTL, a
// restart) and bad input.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <future>
#include <thread>
#include <vector>

#include "deadbolt/deadbolt.hpp"
#include "eventually.hpp"
#include "mariadb_server.hpp"
#include "refusal.hpp"
#include "tcp_proxy.hpp"

using namespace std::chrono_literals;
using deadbolt::Client;
using deadbolt::test::eventually;
using deadbolt::test::MariaDbServer;
using deadbolt::test::refusal;
using deadbolt::test::TcpProxy;
using Clock = std::chrono::steady_clock;

namespace {

// The documented SQL for the GET_LOCK name of name (README, "Databases").
std::string lock_name_sql(const std::string& name) {
    std::string n = "'" + name + "'";
    return "IF(" + n + " REGEXP BINARY '^[a-z0-9._:/@#-]{1,64}$' AND " + n +
           " NOT LIKE 'deadbolt:%', " + n + ", CONCAT('deadbolt:', LEFT(SHA2(" + n +
           ", 256), 55)))";
}

TEST(MyInterop, APlainNameIsSharedWithTheMariadbClientsGetLock) {
    auto& db = MariaDbServer::shared();
    auto c = Client::connect(db.url());
    // One client session holds 'orders:42' for 1.5 s, as another service would, and ends.
    auto other = std::async(std::launch::async, [&] {
        return db.sql("SELECT GET_LOCK('orders:42', 10); SELECT SLEEP(1.5)");
    });
    ASSERT_TRUE(eventually([&] { return db.ask("SELECT IS_USED_LOCK('orders:42')") != "NULL\n"; }));
    EXPECT_THROW(c.acquire("orders:42", {}, {.deadline = Clock::now()}), deadbolt::LockError);
    auto got = c.acquire("orders:42", {}, {.deadline = Clock::now() + 20s});
    EXPECT_EQ(other.get(), 0);
    EXPECT_EQ(db.ask("SELECT IS_FREE_LOCK('orders:42')"), "0\n") << "deadbolt holds it now";
}

TEST(MyInterop, OtherNamesMapToTheDocumentedHashAndNeverCollide) {
    auto& db = MariaDbServer::shared();
    auto c = Client::connect(db.url());
    for (const std::string& name :
         std::vector<std::string>{"Orders:42", "orders:42:" + std::string(60, 'x'), "deadbolt:x"}) {
        auto held = c.acquire(name);
        auto mapped = db.ask("SELECT " + lock_name_sql(name));
        mapped.pop_back();
        EXPECT_EQ(mapped.size(), 64u) << name;
        EXPECT_EQ(db.ask("SELECT IS_FREE_LOCK('" + mapped + "')"), "0\n") << name;
    }
    // 'Orders:42' and 'orders:42' are two locks for deadbolt, though GET_LOCK is case-blind.
    auto upper = c.acquire("Orders:42");
    EXPECT_TRUE(c.acquire("orders:42", {}, {.deadline = Clock::now()}).valid());
}

TEST(MyWaiting, AWaiterRunsNoStatementWhileItWaitsAndGetsTheLockAtTheRelease) {
    auto& db = MariaDbServer::shared();
    auto a = Client::connect(db.url()), b = Client::connect(db.url());
    auto held = a.acquire("waiting:quiet", {.ttl = 60s});
    auto waiter = std::async(std::launch::async, [&] {
        return b.acquire("waiting:quiet", {}, {.deadline = Clock::now() + 30s});
    });
    auto waiting = [&] {
        return db.ask(
            "SELECT ID FROM information_schema.PROCESSLIST WHERE STATE = 'User lock' "
            "AND INFO LIKE '%GET_LOCK(''waiting:quiet''%'");
    };
    ASSERT_TRUE(eventually([&] { return !waiting().empty(); }));
    auto id = waiting();
    std::this_thread::sleep_for(1500ms);
    EXPECT_EQ(waiting(), id) << "the same GET_LOCK statement still waits, none ran after it";
    held.release();
    EXPECT_TRUE(waiter.get().valid());
}

TEST(MyAdmin, StatusListAndForceUnlockSeeTheServersLocks) {
    auto& db = MariaDbServer::shared();
    auto a = Client::connect(db.url()), b = Client::connect(db.url());
    const std::string name = std::string("admin:Held\0bin", 14);
    // Renewals come every 10 s: an evicted holder hears sooner only from the watch on its
    // session's socket.
    auto held = a.acquire(name, {.ttl = 30s});
    auto s = b.status(name);
    EXPECT_TRUE(s.held);
    EXPECT_EQ(s.kind, "mutex");
    auto waiter = std::async(std::launch::async,
                             [&] { return b.acquire(name, {}, {.deadline = Clock::now() + 30s}); });
    ASSERT_TRUE(eventually([&] { return b.status(name).waiters == 1; }));
    bool found = false;
    for (const auto& l : b.list("*")) found |= l.name == name;
    EXPECT_TRUE(found) << "a binary name is listed as it was given";
    EXPECT_EQ(b.force_unlock(name), "mutex");
    EXPECT_TRUE(eventually([&] { return held.stop_token().stop_requested(); }, 5s))
        << "the holder heard of its ended session only at its renewal";
    EXPECT_GT(waiter.get().fence(), held.fence());
    EXPECT_EQ(b.force_unlock("admin:never"), "free");
}

TEST(MyAdmin, ALaterHoldingOfAPooledSessionIsHeardEndedAtOnceToo) {
    // The watch keeps a session's socket from its first holding until the session ends: the
    // holdings that reuse it from the pool are heard at once as well (renewals are 10 s away).
    auto& db = MariaDbServer::shared();
    auto a = Client::connect(db.url()), b = Client::connect(db.url());
    for (int i = 0; i < 3; ++i) a.acquire("admin:later", {.ttl = 30s}).release();
    auto held = a.acquire("admin:later", {.ttl = 30s});
    EXPECT_EQ(b.force_unlock("admin:later"), "mutex");
    EXPECT_TRUE(eventually([&] { return held.stop_token().stop_requested(); }, 5s))
        << "a holding on a pooled session heard of its end only at its renewal";
}

TEST(MyAdmin, StatusShowsTheHoldersPidFenceAndHowTheHoldingEndsAndNamesAForeignHolder) {
    auto& db = MariaDbServer::shared();
    auto a = Client::connect(db.url()), b = Client::connect(db.url());
    auto held = a.acquire("truth:held", {.ttl = 30s});
    auto s = b.status("truth:held");
    EXPECT_EQ(s.last_fence, held.fence()) << "the fence its session's row carries";
    EXPECT_EQ(s.session_timeout, 30s) << "it ends with its session, after 30 s of silence";
    EXPECT_EQ(s.ttl, -1ms);
    ASSERT_EQ(s.held_by.size(), 1u);
    EXPECT_EQ(s.held_by[0].pid, ::getpid());
    EXPECT_NE(s.held_by[0].host, "localhost");
    EXPECT_FALSE(s.held_by[0].host.empty());
    EXPECT_TRUE(s.held_by[0].since.has_value());
    EXPECT_TRUE(s.held_by[0].client.empty());
    // A grant after a wait, and a MultiLock's names, each as it was taken.
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
    // Another client's GET_LOCK: named as such, with no host or pid of deadbolt's.
    auto other = std::async(std::launch::async,
                            [&] { return db.sql("SELECT GET_LOCK('truth:other', 10), SLEEP(2)"); });
    ASSERT_TRUE(eventually([&] { return b.status("truth:other").held; }));
    auto foreign = b.status("truth:other");
    ASSERT_EQ(foreign.held_by.size(), 1u);
    EXPECT_TRUE(foreign.held_by[0].host.empty());
    EXPECT_NE(foreign.held_by[0].client.find("GET_LOCK of another client"), std::string::npos)
        << foreign.held_by[0].client;
    EXPECT_EQ(foreign.last_fence, 0u);
    EXPECT_EQ(other.get(), 0);
}

TEST(MyFaults, AHolderCutOffPastItsTtlLosesTheLockToAWaiter) {
    auto& db = MariaDbServer::shared();
    TcpProxy proxy(db.port());
    auto cut_off = Client::connect(db.url_via(proxy.port()));
    auto other = Client::connect(db.url());
    auto held = cut_off.acquire("faults:cut-off", {.ttl = 1s});
    proxy.stall_requests(true);
    proxy.stall_replies(true);
    // The server ends the silent session after its 1 s wait_timeout and hands the lock over.
    auto next = other.acquire("faults:cut-off", {}, {.deadline = Clock::now() + 30s});
    EXPECT_GT(next.fence(), held.fence());
    EXPECT_TRUE(eventually([&] { return held.stop_token().stop_requested(); }));
    proxy.stall_requests(false);
    proxy.stall_replies(false);
}

TEST(MyFaults, TheDocumentedFencedUpdateOfAUsersRowRefusesAStaleHolder) {
    auto& db = MariaDbServer::shared();
    ASSERT_EQ(db.sql("CREATE TABLE stock (sku VARCHAR(8) PRIMARY KEY, qty INT, fence BIGINT, "
                     "version BIGINT); INSERT INTO stock VALUES ('a', 10, 0, 0)"),
              0);
    TcpProxy proxy(db.port());
    auto cut_off = Client::connect(db.url_via(proxy.port()));
    auto other = Client::connect(db.url());
    auto stale = cut_off.acquire("stock:a", {.ttl = 1s});
    proxy.stall_requests(true);
    proxy.stall_replies(true);
    auto next = other.acquire("stock:a", {}, {.deadline = Clock::now() + 30s});
    // README, "Databases": the fence and the version read go into the UPDATE itself.
    auto update = [&](std::uint64_t fence, const std::string& version) {
        return db.ask("UPDATE stock SET qty = qty - 1, fence = " + std::to_string(fence) +
                      ", version = version + 1 WHERE sku = 'a' AND fence <= " +
                      std::to_string(fence) + " AND version = " + version + "; SELECT ROW_COUNT()");
    };
    EXPECT_EQ(update(next.fence(), "0"), "1\n") << "the holder's write lands";
    EXPECT_EQ(update(stale.fence(), "1"), "0\n") << "the stale holder's write updates 0 rows";
    EXPECT_EQ(update(next.fence(), "0"), "0\n") << "a moved version updates 0 rows";
    EXPECT_EQ(db.ask("SELECT qty, fence, version FROM stock"),
              "9\t" + std::to_string(next.fence()) + "\t1\n");
    proxy.stall_requests(false);
    proxy.stall_replies(false);
}

TEST(MyFenced, AStaleFenceAndAMovedVersionWriteNothing) {
    auto& db = MariaDbServer::shared();
    auto c = Client::connect(db.url());
    const std::string key = std::string("fenced:stock\0", 13);
    EXPECT_FALSE(c.fenced_get(key).value.has_value());
    EXPECT_TRUE(c.fenced_set(key, "10", 5).accepted);
    auto stale = c.fenced_set(key, "9", 4);
    EXPECT_FALSE(stale.accepted);
    EXPECT_TRUE(stale.stale_fence);
    EXPECT_EQ(stale.highest, 5u);
    auto v = c.fenced_get(key);
    EXPECT_EQ(v.value, "10");
    EXPECT_TRUE(c.fenced_cas(key, "8", 6, v.version).accepted);
    auto moved = c.fenced_cas(key, "7", 6, v.version);
    EXPECT_FALSE(moved.accepted);
    EXPECT_FALSE(moved.stale_fence);
    EXPECT_EQ(c.fenced_get(key).value, "8");
    EXPECT_EQ(db.ask("SELECT value, fence, version FROM deadbolt_fenced WHERE k = "
                     "'fenced:stock\\0'"),
              "8\t6\t2\n");
}

TEST(MyFenced, WritersOfOneKeyAtOnceNeverDeadlock) {
    auto& db = MariaDbServer::shared();
    std::vector<std::thread> writers;
    std::atomic<int> failed{0}, accepted{0};
    for (int w = 0; w < 4; ++w)
        writers.emplace_back([&, w] {
            auto c = Client::connect(db.url());
            for (int i = 1; i <= 40; ++i) try {
                    if (c.fenced_set(
                             "fenced:race", std::to_string(w),
                             (static_cast<std::uint64_t>(i) * 4) + static_cast<std::uint64_t>(w))
                            .accepted)
                        ++accepted;
                } catch (const deadbolt::Error& e) {
                    ADD_FAILURE() << e.what();
                    ++failed;
                }
        });
    for (auto& t : writers) t.join();
    EXPECT_EQ(failed.load(), 0);
    EXPECT_GT(accepted.load(), 0);
}

TEST(MyFaults, ARestartedServerEndsEveryHoldingAndTheClientCarriesOn) {
    MariaDbServer db;  // of its own: it is restarted
    auto c = Client::connect(db.url());
    auto held = c.acquire("faults:restart", {.ttl = 2s});
    db.stop(SIGKILL);
    db.start();
    EXPECT_TRUE(eventually([&] { return held.stop_token().stop_requested(); }, 20s));
    auto again = c.acquire("faults:restart", {}, {.deadline = Clock::now() + 20s});
    EXPECT_GT(again.fence(), held.fence()) << "the fence sequence never goes back";
}

TEST(MyBadInput, WrongPasswordMissingDatabaseAndBadUrlsSayWhatIsWrong) {
    auto& db = MariaDbServer::shared();
    auto port = std::to_string(db.port());
    auto wrong = refusal<deadbolt::Error>("mysql://deadbolt:nope@127.0.0.1:" + port + "/deadbolt");
    EXPECT_NE(wrong.find("Access denied"), std::string::npos) << wrong;
    auto missing =
        refusal<deadbolt::Error>("mariadb://deadbolt:s3cret@127.0.0.1:" + port + "/nosuchdb");
    EXPECT_NE(missing.find("nosuchdb"), std::string::npos) << missing;
    auto nodb = refusal<deadbolt::UsageError>("mysql://u:p@127.0.0.1:" + port);
    EXPECT_NE(nodb.find("names no database"), std::string::npos) << nodb;
    auto option = refusal<deadbolt::UsageError>(db.url("?schema=x"));
    EXPECT_NE(option.find("unknown MariaDB URL option 'schema'"), std::string::npos) << option;
    auto dead = refusal<deadbolt::ConnectionError>("mysql://u:p@127.0.0.1:1/db");
    EXPECT_NE(dead.find("cannot connect to MariaDB"), std::string::npos) << dead;
}

TEST(MyBadInput, AUserWithoutRightsIsToldWhichToGrant) {
    auto& db = MariaDbServer::shared();
    ASSERT_EQ(db.sql("CREATE DATABASE empty; CREATE USER 'app'@'%' IDENTIFIED BY 'pw'; GRANT "
                     "SELECT ON empty.* TO 'app'@'%'"),
              0);
    auto why = refusal<deadbolt::Error>("mysql://app:pw@127.0.0.1:" + std::to_string(db.port()) +
                                        "/empty");
    EXPECT_NE(why.find("GRANT CREATE, ALTER, SELECT, INSERT, UPDATE, DELETE ON empty.* TO 'app'"),
              std::string::npos)
        << why;
    EXPECT_EQ(db.ask("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = "
                     "'empty'"),
              "0\n")
        << "nothing was left behind";
}

TEST(MyBadInput, WhatMariaDbCannotKeepIsRefusedWithTheReason) {
    auto& db = MariaDbServer::shared();
    auto c = Client::connect(db.url());
    try {
        c.rwlock("refused:rw").lock_shared();
        ADD_FAILURE() << "an RWLock on GET_LOCK";
    } catch (const deadbolt::UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("no shared mode"), std::string::npos) << e.what();
    }
    try {
        c.acquire("refused:ttl", {.ttl = 1500ms});
        ADD_FAILURE() << "a TTL of 1.5 s on whole-second timeouts";
    } catch (const deadbolt::UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("whole seconds"), std::string::npos) << e.what();
    }
    EXPECT_EQ(db.ask("SELECT IS_FREE_LOCK(" + lock_name_sql("refused:ttl") + ")"), "1\n");
    // What needs a wake-up MariaDB cannot give: each refused with its own reason.
    auto reason = [](const std::function<void()>& use) {
        try {
            use();
        } catch (const deadbolt::UsageError& e) {
            return std::string(e.what());
        }
        return std::string("(accepted)");
    };
    auto semaphore = reason([&] { c.permit_semaphore("refused:sem", 2); });
    EXPECT_NE(semaphore.find("any of N permits"), std::string::npos) << semaphore;
    auto latch = reason([&] { c.latch("refused:latch"); });
    EXPECT_NE(latch.find("count reaches zero"), std::string::npos) << latch;
    auto reentrant = reason([&] { c.reentrant_mutex("refused:re").lock(); });
    EXPECT_NE(reentrant.find("from several clients"), std::string::npos) << reentrant;
    auto election = reason([&] { c.election("refused:lead").campaign("v"); });
    EXPECT_NE(election.find("leader changes"), std::string::npos) << election;
    for (const auto* r : {&semaphore, &latch, &reentrant, &election})
        EXPECT_NE(r->find("no LISTEN/NOTIFY"), std::string::npos) << *r;
}

}  // namespace
