// Mutex basics against a real redis-server: exclusion, key format, unlock semantics.
#include <gtest/gtest.h>

#include <mutex>
#include <thread>

#include "deadbolt/deadbolt.hpp"
#include "redis_server.hpp"

using namespace std::chrono_literals;
using deadbolt::test::RedisServer;

static_assert(std::is_same_v<decltype(std::declval<deadbolt::Mutex&>().try_lock()), bool>);
// TimedLockable: these instantiate only if lock/try_lock/try_lock_for/until/unlock exist.
template class std::unique_lock<deadbolt::Mutex>;
static_assert(noexcept(std::declval<deadbolt::Mutex&>().unlock()));

TEST(Mutex, LockStoresTokenAndUnlockDeletesKey) {
    RedisServer srv;
    auto client = deadbolt::Client::connect(srv.url());
    auto m = client.mutex("jobs:nightly");
    auto raw = srv.raw();
    {
        std::unique_lock lk(m);
        auto v = raw.cmd({"GET", "jobs:nightly"});
        ASSERT_EQ(v.type, deadbolt::test::RawReply::string_t);
        EXPECT_EQ(v.str, m.lease().token());
        // host:pid: and 128 random bits in hex
        EXPECT_EQ(v.str.size() - v.str.rfind(':') - 1, 32u) << v.str;
        auto pttl = raw.cmd({"PTTL", "jobs:nightly"}).integer;
        EXPECT_GT(pttl, 25000);
        EXPECT_LE(pttl, 30000);
        EXPECT_TRUE(m.lease().valid());
        EXPECT_TRUE(m.lease().is_current());
    }
    EXPECT_EQ(raw.cmd({"EXISTS", "jobs:nightly"}).integer, 0);
}

TEST(Mutex, AMovedFromMutexIsRefusedAndTheOneItMovedToLocks) {
    RedisServer srv;
    auto client = deadbolt::Client::connect(srv.url());
    auto from = client.mutex("moved");
    deadbolt::Mutex to(std::move(from));
    // The moved-from one is empty: a clear refusal, thrown or in ec, and nothing written.
    try {
        from.lock();  // NOLINT(bugprone-use-after-move): what this test is about
        ADD_FAILURE() << "a moved-from Mutex locked";
    } catch (const deadbolt::UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("moved from"), std::string::npos) << e.what();
    }
    std::error_code ec;
    from.lock(ec);  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(ec, deadbolt::errc::invalid_argument);
    EXPECT_EQ(srv.raw().cmd({"EXISTS", "moved"}).integer, 0);
    std::unique_lock lk(to);
    EXPECT_EQ(srv.raw().cmd({"GET", "moved"}).str, to.lease().token());
}

TEST(Mutex, SecondClientCannotTakeHeldLock) {
    RedisServer srv;
    auto a = deadbolt::Client::connect(srv.url());
    auto b = deadbolt::Client::connect(srv.url());
    auto ma = a.mutex("x");
    auto mb = b.mutex("x");
    ASSERT_TRUE(ma.try_lock());
    EXPECT_FALSE(mb.try_lock());
    EXPECT_FALSE(mb.try_lock_for(100ms));
    ma.unlock();
    EXPECT_TRUE(mb.try_lock());
    mb.unlock();
}

TEST(Mutex, ScopedLockWorksAcrossTwoNames) {
    RedisServer srv;
    auto c = deadbolt::Client::connect(srv.url());
    auto m1 = c.mutex("a");
    auto m2 = c.mutex("b");
    {
        std::scoped_lock lk(m1, m2);
        EXPECT_TRUE(m1.owns_lock());
        EXPECT_TRUE(m2.owns_lock());
        EXPECT_EQ(srv.raw().cmd({"EXISTS", "a", "b"}).integer, 2);
    }
    EXPECT_EQ(srv.raw().cmd({"EXISTS", "a", "b"}).integer, 0);
}

TEST(Mutex, UnlockByNonOwnerLeavesOthersKeyAlone) {
    RedisServer srv;
    auto c = deadbolt::Client::connect(srv.url());
    std::error_code lost_why;
    deadbolt::MutexOptions o;
    o.auto_renew = false;
    o.on_lost = [&](std::string_view, std::error_code ec) { lost_why = ec; };
    auto m = c.mutex("shared", o);
    ASSERT_TRUE(m.try_lock());
    auto raw = srv.raw();
    raw.cmd({"SET", "shared", "someone-else"});  // our lease was taken over
    m.unlock();                                  // must not throw, must not delete theirs
    EXPECT_EQ(raw.cmd({"GET", "shared"}).str, "someone-else");
    EXPECT_EQ(lost_why, deadbolt::errc::not_owner);
}

TEST(Mutex, ThreadsOfOneProcessExcludeEachOther) {
    RedisServer srv;
    auto c = deadbolt::Client::connect(srv.url());
    auto m = c.mutex("counter-lock");
    int inside = 0, max_inside = 0, total = 0;
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; ++t)
        ts.emplace_back([&] {
            for (int i = 0; i < 50; ++i) {
                std::lock_guard lk(m);
                max_inside = std::max(max_inside, ++inside);
                ++total;
                --inside;
            }
        });
    for (auto& t : ts) t.join();
    EXPECT_EQ(max_inside, 1);
    EXPECT_EQ(total, 200);
}

TEST(Mutex, NamesAreBinarySafeAndDistinct) {
    RedisServer srv;
    auto c = deadbolt::Client::connect(srv.url());
    std::vector<std::string> names = {
        "a",    "{a}", "a b", "a:b", "ü-名前", std::string("a\0b", 3), std::string("a\0c", 3),
        "{x}y", "{}",  "}{"};
    std::vector<deadbolt::Lease> held;
    for (auto& n : names)
        held.push_back(c.acquire(n, {}, {.deadline = std::chrono::steady_clock::now()}));
    auto raw = srv.raw();
    for (std::size_t i = 0; i < names.size(); ++i)
        EXPECT_EQ(raw.cmd({"GET", names[i]}).str, held[i].token()) << names[i];
    held.clear();
    for (auto& n : names) EXPECT_EQ(raw.cmd({"EXISTS", n}).integer, 0) << n;
}
