// Who holds a lock (status) and which locks are held (list): holders named by host, pid and
// grant time for every kind, locks found by SCAN under the prefix and nothing else.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include "deadbolt/deadbolt.hpp"
#include "redis_server.hpp"

using namespace std::chrono_literals;
using deadbolt::test::RedisServer;
using SysClock = std::chrono::system_clock;

namespace {

std::string this_host() {
    char buf[256] = {};
    gethostname(buf, sizeof buf - 1);
    return buf;
}

// Every holder is this process, and holders with a fence were granted within [from, to].
void expect_held_here(const deadbolt::LockStatus& s, std::size_t count, bool with_since,
                      SysClock::time_point from, SysClock::time_point to) {
    ASSERT_EQ(s.held_by.size(), count) << s.kind;
    for (const auto& h : s.held_by) {
        EXPECT_EQ(h.host, this_host()) << s.kind;
        EXPECT_EQ(h.pid, getpid()) << s.kind;
        EXPECT_GT(h.ttl.count(), 0) << s.kind;
        ASSERT_EQ(h.since.has_value(), with_since) << s.kind;
        if (with_since) {
            // The server's clock wrote it: the same machine's, to a millisecond.
            EXPECT_GE(*h.since, from - 5ms) << s.kind;
            EXPECT_LE(*h.since, to + 5ms) << s.kind;
        }
    }
}

std::vector<std::string> names_of(const std::vector<deadbolt::ListedLock>& locks) {
    std::vector<std::string> out;
    for (const auto& l : locks) out.push_back(l.name);
    return out;
}

}  // namespace

TEST(Status, NamesEveryHolderByHostPidAndGrantTimeForEveryKind) {
    RedisServer srv;
    auto client = deadbolt::Client::connect(srv.url());
    auto before = SysClock::now();
    auto mutex = client.acquire("job");
    auto leader = client.campaign("ldr", "http://10.0.0.3:8080");
    auto reentrant = client.reentrant_mutex("re");
    reentrant.lock();
    auto sem = client.semaphore("slots", 3);
    sem.acquire();
    sem.acquire();
    auto rw = client.rwlock("rd");
    rw.lock_shared();
    auto fair = client.acquire("fair", deadbolt::LockMode::fair, {});
    auto after = SysClock::now();

    expect_held_here(client.status("job"), 1, true, before, after);
    expect_held_here(client.status("fair"), 1, true, before, after);
    expect_held_here(client.status("re"), 1, true, before, after);
    auto l = client.status("ldr");
    expect_held_here(l, 1, true, before, after);
    EXPECT_EQ(l.value, "http://10.0.0.3:8080");
    // Permits and readers carry no fence: no grant time, but each holder is named.
    auto s = client.status("slots");
    EXPECT_EQ(s.holders, 2);
    expect_held_here(s, 2, false, before, after);
    expect_held_here(client.status("rd"), 1, false, before, after);

    rw.unlock_shared();
    EXPECT_TRUE(client.status("rd").held_by.empty());
    EXPECT_TRUE(client.status("free-name").held_by.empty());
    reentrant.unlock();
}

TEST(Status, AHolderDeadboltDidNotWriteIsNotGivenAnotherHoldersName) {
    RedisServer srv;
    auto client = deadbolt::Client::connect(srv.url());
    client.acquire("shared").release();  // leaves a fence behind, as a deadbolt holder would
    srv.raw().cmd({"SET", "shared", "2b0d7f1c5e6a4b3c8d9e0f1a2b3c4d5e", "PX", "60000"});
    auto s = client.status("shared");
    EXPECT_TRUE(s.held);
    ASSERT_EQ(s.held_by.size(), 1u);
    EXPECT_EQ(s.held_by.front().host, "");
    EXPECT_EQ(s.held_by.front().pid, 0);
    EXPECT_FALSE(s.held_by.front().since.has_value()) << "the old fence is not this holder's";
}

TEST(Status, ListsAtMostTheCapOfHoldersAndCountsThemAll) {
    RedisServer srv;
    auto client = deadbolt::Client::connect(srv.url());
    auto sem = client.semaphore("wide", 200);
    sem.acquire();  // makes the semaphore; the rest join it as other processes would
    auto now_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(SysClock::now().time_since_epoch())
            .count();
    for (int i = 0; i < 129; ++i)
        srv.raw().cmd({"ZADD", "wide", std::to_string(now_ms + 60000),
                       "elsewhere:" + std::to_string(1000 + i) + ":" + std::string(32, 'a')});
    auto s = client.status("wide");
    EXPECT_EQ(s.holders, 130);
    ASSERT_EQ(static_cast<int>(s.held_by.size()), deadbolt::kMaxListedHolders);
    EXPECT_EQ(s.held_by.front().pid, getpid()) << "soonest to expire first";
    EXPECT_EQ(s.held_by.back().host, "elsewhere");
}

TEST(List, FindsEveryHeldLockUnderThePrefixAndNothingElse) {
    RedisServer srv;
    auto app = deadbolt::Client::connect(srv.url() + "?prefix=app:");
    auto job = app.acquire("job");
    auto sem = app.semaphore("slots", 2);
    sem.acquire();
    auto rw = app.rwlock("rd");
    rw.lock_shared();
    auto leader = app.campaign("ldr", "me");
    auto both = app.acquire_all({"a", "{tagged}:b"});
    app.acquire("gone").release();  // its fence key stays a minute: still not a lock
    // Beside them: another prefix (a glob character in it), a redis-py lock, a counter and a
    // list of the application's.
    auto star = deadbolt::Client::connect(srv.url() + "?prefix=app*");
    auto other = star.acquire("x");
    srv.raw().cmd({"SET", "app:pylock", "2b0d7f1c5e6a4b3c8d9e0f1a2b3c4d5e", "PX", "60000"});
    srv.raw().cmd({"SET", "app:counter", "5"});
    srv.raw().cmd({"RPUSH", "app:inbox", "m1"});

    auto mine = app.list();
    EXPECT_EQ(names_of(mine),
              (std::vector<std::string>{"a", "job", "ldr", "rd", "slots", "{tagged}:b"}));
    for (const auto& l : mine) {
        EXPECT_TRUE(l.status.held) << l.name;
        ASSERT_FALSE(l.status.held_by.empty()) << l.name;
        EXPECT_EQ(l.status.held_by.front().pid, getpid()) << l.name;
    }
    EXPECT_EQ(names_of(app.list("*", true)),
              (std::vector<std::string>{"a", "counter", "job", "ldr", "pylock", "rd", "slots",
                                        "{tagged}:b"}));
    EXPECT_EQ(names_of(app.list("s*")), std::vector<std::string>{"slots"});
    EXPECT_EQ(names_of(star.list()), std::vector<std::string>{"x"}) << "prefix matched literally";
    EXPECT_THROW(app.list(""), deadbolt::UsageError);

    job.release();
    rw.unlock_shared();
    EXPECT_EQ(names_of(app.list("[jr]*")), std::vector<std::string>{});
}
