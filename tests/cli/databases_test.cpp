// Issue 30 on PostgreSQL and MariaDB, as a user of the CLI sees it: status and list tell who
// holds a lock, its fence and how the holding ends, and name a foreign holder (item 5); a
// user without rights is told what to GRANT before and after `deadbolt init` (item 10); a
// release whose answer was lost ends the session the server still has and the command's own
// exit code stands, while a session that died meanwhile is a loss (item 1).
#include <cctype>
#include <cstdio>
#include <fstream>

#include "cli.hpp"
#include "eventually.hpp"
#include "tcp_proxy.hpp"

namespace deadbolt::clitest {
namespace {

using namespace std::chrono_literals;
using test::eventually;

// What each engine's side of a test needs: an administrator's statements, a user of the
// test's own, and the words the engine's messages use.
#ifdef DEADBOLT_TEST_PG
void hold_as_foreign_client(Pg& e, const std::string& name) {
    e.server.psql("SELECT pg_advisory_lock(deadbolt.key('" + name + "')), pg_sleep(3)");
}
const char* foreign_words(const Pg&) {
    return "'psql' session from";
}
// What the statement that ends an orphaned holding session says.
const char* orphan_end_words(const Pg&) {
    return "pg_terminate_backend";
}
// A user who may do nothing yet, and the schema (not made yet) it is pointed at.
std::string rightless_url(Pg& e, const std::string& user, const std::string& place) {
    e.server.psql("CREATE ROLE " + user + " LOGIN PASSWORD 'pw'");
    return "postgresql://" + user + ":pw@127.0.0.1:" + std::to_string(e.server.port()) +
           "/deadbolt?schema=" + place;
}
std::string owner_url(Pg& e, const std::string& place) {
    return e.server.url("?schema=" + place);
}
std::vector<std::string> grant_words(const Pg&, const std::string& user, const std::string& place,
                                     bool made) {
    if (made) return {"may not use it", "GRANT USAGE ON SCHEMA " + place + " TO " + user};
    return {"GRANT CREATE ON DATABASE deadbolt TO " + user,
            "GRANT USAGE ON SCHEMA " + place + " TO " + user};
}
#endif

#ifdef DEADBOLT_TEST_MY
void hold_as_foreign_client(My& e, const std::string& name) {
    e.server.sql("SELECT GET_LOCK('" + name + "', 10), SLEEP(3)");
}
const char* foreign_words(const My&) {
    return "GET_LOCK of another client";
}
const char* orphan_end_words(const My&) {
    return "KILL CONNECTION";
}
// A user who may read the database (not made yet) it is pointed at, and nothing more.
std::string rightless_url(My& e, const std::string& user, const std::string& place) {
    e.server.sql("CREATE DATABASE " + place + "; GRANT ALL ON " + place +
                 ".* TO 'deadbolt'@'%'; CREATE USER '" + user +
                 "'@'%' IDENTIFIED BY 'pw'; GRANT "
                 "SELECT ON " +
                 place + ".* TO '" + user + "'@'%'");
    return "mysql://" + user + ":pw@127.0.0.1:" + std::to_string(e.server.port()) + "/" + place;
}
std::string owner_url(My& e, const std::string& place) {
    return "mysql://deadbolt:s3cret@127.0.0.1:" + std::to_string(e.server.port()) + "/" + place;
}
std::vector<std::string> grant_words(const My&, const std::string& user, const std::string& place,
                                     bool /*made*/) {
    return {"may not make or use", "GRANT CREATE, ALTER, SELECT, INSERT, UPDATE, DELETE ON " +
                                       place + ".* TO '" + user + "'"};
}
#endif

#if defined(DEADBOLT_TEST_PG) && defined(DEADBOLT_TEST_MY)
using Databases = ::testing::Types<Pg, My>;
#elif defined(DEADBOLT_TEST_PG)
using Databases = ::testing::Types<Pg>;
#elif defined(DEADBOLT_TEST_MY)
using Databases = ::testing::Types<My>;
#endif

#if defined(DEADBOLT_TEST_PG) || defined(DEADBOLT_TEST_MY)
template <class E>
using Database = EveryEngine<E>;
TYPED_TEST_SUITE(Database, Databases, BackendName);

::testing::AssertionResult says_all(const Result& r, const std::vector<std::string>& words) {
    for (const auto& w : words)
        if (auto ok = says(r, {w.c_str()}); !ok) return ok;
    return ::testing::AssertionSuccess();
}

TYPED_TEST(Database, StatusOfARunShowsItsPidItsFenceAndThatItEndsWithItsSession) {
    auto name = own_name("status");
    auto file = ::testing::TempDir() + "/status-" + TypeParam::kName;
    std::remove(file.c_str());
    auto run = deadbolt_async(this->url(), {"run", "--ttl", "30s", name, "--", "sh", "-c",
                                            "echo $DEADBOLT_FENCE $PPID > " + file + "; sleep 3"});
    std::string fence, pid;
    ASSERT_TRUE(eventually([&] {
        std::ifstream in(file);
        return static_cast<bool>(in >> fence >> pid);
    }));
    auto s = this->cli({"status", name});
    EXPECT_EQ(s.rc, 0) << s.out;
    const std::string ends = "ends with its holder's session (timeout 30.0s)";
    EXPECT_TRUE(says_all(s, {ends, "last fence " + fence, "pid " + pid}));
    auto j = this->cli({"status", "--json", name});
    EXPECT_TRUE(says_all(j, {"\"last_fence\":" + fence, "\"pid\":" + pid,
                             "\"session_timeout_ms\":30000", "\"ttl_ms\":-1"}));
    auto l = this->cli({"list", name});
    EXPECT_TRUE(says_all(l, {"with session", "pid " + pid}));
    EXPECT_EQ(run.get().rc, 0);
}

TYPED_TEST(Database, AForeignHolderIsNamedAsTheEnginesOwnClient) {
    std::string name = "foreign:";  // plain lowercase: GET_LOCK takes it as it is
    for (char c : std::string(TypeParam::kName)) name += static_cast<char>(std::tolower(c));
    auto holder =
        std::async(std::launch::async, [&] { hold_as_foreign_client(this->engine, name); });
    ASSERT_TRUE(eventually([&] { return this->cli({"status", name}).rc == 0; }));
    auto s = this->cli({"status", name});
    EXPECT_TRUE(says_all(s, {"a client deadbolt did not write", foreign_words(this->engine)}));
    holder.get();
}

TYPED_TEST(Database, AUserWithoutRightsIsToldWhatToGrantBeforeAndAfterInit) {
    const std::string user = "norights", place = "cli_rights";
    auto url = rightless_url(this->engine, user, place);
    auto before = deadbolt(url, {"run", "job", "--", "true"});
    EXPECT_EQ(before.rc, 69);
    EXPECT_TRUE(says_all(before, grant_words(this->engine, user, place, false)));
    auto init = deadbolt(owner_url(this->engine, place), {"init"});
    ASSERT_EQ(init.rc, 0) << init.out;
    auto after = deadbolt(url, {"run", "job", "--", "true"});
    EXPECT_EQ(after.rc, 69);
    EXPECT_TRUE(says_all(after, grant_words(this->engine, user, place, true)));
}

// The holding's connection runs through two proxies; new connections skip the inner one once
// the holder holds, and the inner one then holds back whatever the holding's connection sends
// (its release, and the close that follows it): the server keeps the session, holding.
struct StalledRelease {
    test::TcpProxy inner, outer;
    std::uint16_t server;
    explicit StalledRelease(std::uint16_t port) : inner(port), outer(inner.port()), server(port) {}
    void stall() {
        outer.retarget(server);
        inner.freeze_requests(true);
    }
    ~StalledRelease() { inner.freeze_requests(false); }
};

TYPED_TEST(Database, AReleaseWhoseAnswerWasLostEndsTheSessionTheServerKeptAndTheCodeStands) {
    auto name = own_name("stalled");
    StalledRelease link(this->engine.server.port());
    auto run =
        deadbolt_async(this->engine.server.url_via(link.outer.port(), "?command_timeout=300ms"),
                       {"run", "--ttl", "30s", name, "--", "sh", "-c", "sleep 2; exit 3"});
    ASSERT_TRUE(eventually([&] { return this->cli({"status", name}).rc == 0; }));
    link.stall();
    auto r = run.get();
    EXPECT_EQ(r.rc, 3) << "the lock was ours up to the release: " << r.out;
    EXPECT_TRUE(says(r, {"asking again"}));
    // Left alone, the server would keep that session holding for its 30 s idle timeout.
    EXPECT_TRUE(eventually(
        [&] {
            return this->cli({"status", name}).rc == 1;
        },
        5s))
        << "the retry ended the session the server still had";
}

// The release asked again first sees the old session still holding, then ends it; when the
// answer to that end is lost too, asking again finds the session gone, by our own hand: the
// lock was ours up to the release all the same.
TYPED_TEST(Database, AReleaseAskedAgainWhoseEndOfTheOldSessionGotNoAnswerIsNoLoss) {
    auto name = own_name("endlost");
    StalledRelease link(this->engine.server.port());
    test::TcpProxy settling(this->engine.server.port());
    // The command ends when the test says, after the links are set, however slow the machine.
    auto go = ::testing::TempDir() + "/endlost-" + TypeParam::kName;
    std::remove(go.c_str());
    auto run =
        deadbolt_async(this->engine.server.url_via(link.outer.port(), "?command_timeout=300ms"),
                       {"run", "--ttl", "30s", name, "--", "sh", "-c",
                        "while [ ! -e " + go + " ]; do sleep 0.05; done; exit 3"});
    ASSERT_TRUE(eventually([&] { return this->cli({"status", name}).rc == 0; }));
    link.inner.freeze_requests(true);
    link.outer.retarget(settling.port());
    settling.stall_replies_from_request_with(orphan_end_words(this->engine));
    std::ofstream(go).put('\n');
    ASSERT_TRUE(eventually([&] { return settling.replies_held() > 0; }, 10s))
        << "the old session was never ended";
    std::this_thread::sleep_for(500ms);  // past the end's command timeout: no answer
    settling.stall_replies(false);
    auto r = run.get();
    EXPECT_EQ(r.rc, 3) << "the old session held the lock after the release: " << r.out;
    EXPECT_TRUE(says(r, {"asking again"}));
    EXPECT_TRUE(eventually([&] { return this->cli({"status", name}).rc == 1; }, 5s));
}

TYPED_TEST(Database, AReleaseWhoseAnswerWasLostIsALossWhenTheSessionDiedMeanwhile) {
    auto name = own_name("died");
    StalledRelease link(this->engine.server.port());
    auto run =
        deadbolt_async(this->engine.server.url_via(link.outer.port(), "?command_timeout=300ms"),
                       {"run", "--ttl", "30s", name, "--", "sh", "-c", "sleep 1; exit 3"});
    ASSERT_TRUE(eventually([&] { return this->cli({"status", name}).rc == 0; }));
    link.stall();
    link.outer.freeze_requests(true);     // the retries wait too, until the session is gone
    std::this_thread::sleep_for(2500ms);  // the command ended; its release got no answer
    this->engine.take_away(name);         // an operator ends the holding's session
    link.outer.freeze_requests(false);
    auto r = run.get();
    EXPECT_EQ(r.rc, 70) << r.out;
    EXPECT_TRUE(says(r, {"asking again", "lost"}));
}
#endif

}  // namespace
}  // namespace deadbolt::clitest
