// ReentrantMutex: re-entry by one owner, the count kept on the server, other owners excluded.
#include <gtest/gtest.h>

#include <mutex>
#include <thread>

#include "deadbolt/deadbolt.hpp"
#include "eventually.hpp"
#include "redis_server.hpp"
#include "tcp_proxy.hpp"

using namespace std::chrono_literals;
using deadbolt::test::eventually;
using deadbolt::test::RedisServer;
using deadbolt::test::TcpProxy;

template class std::unique_lock<deadbolt::ReentrantMutex>;
static_assert(noexcept(std::declval<deadbolt::ReentrantMutex&>().unlock()));

TEST(ReentrantMutex, OwnerReentersAndTheCountLivesOnTheServer) {
    RedisServer srv;
    auto c = deadbolt::Client::connect(srv.url());
    auto m = c.reentrant_mutex("re");
    auto raw = srv.raw();
    m.lock();
    auto fence = m.lease().fence();
    m.lock();
    EXPECT_EQ(m.hold_count(), 2u);
    EXPECT_EQ(raw.cmd({"HGET", "re", m.owner()}).str, "2");
    EXPECT_EQ(m.lease().fence(), fence);  // issued on the first holding only
    m.unlock();
    EXPECT_EQ(raw.cmd({"HGET", "re", m.owner()}).str, "1");
    m.unlock();
    EXPECT_EQ(raw.cmd({"EXISTS", "re"}).integer, 0);
    m.lock();
    EXPECT_GT(m.lease().fence(), fence);
    m.unlock();
}

namespace {

// A server, client a behind a proxy whose replies can be held back (a reply not heard in
// 200 ms is a lost one), and client b straight to the server.
struct BehindASlowLink {
    RedisServer srv;
    TcpProxy slow{srv.port()};
    deadbolt::Client a = deadbolt::Client::connect(
        "redis://127.0.0.1:" + std::to_string(slow.port()) + "?command_timeout=200ms");
    deadbolt::Client b = deadbolt::Client::connect(srv.url());
};

}  // namespace

TEST(ReentrantMutex, AGivenOwnersLostReleaseIsNotSentAgainAndSparesItsNextHolding) {
    // An owner's token is the same from one holding to the next, and an owner given by the
    // user may hold on through other clients: a release whose answer is lost may have run,
    // and sent again it would count down a hold of theirs. It is not sent again.
    BehindASlowLink s;
    auto ma = s.a.reentrant_mutex("re", {}, "one-owner");
    auto mb = s.b.reentrant_mutex("re", {}, "one-owner");
    auto& slow = s.slow;
    auto raw = s.srv.raw();
    ma.lock();
    ma.unlock();  // the server knows the release's script now: no answer of NOSCRIPT to wait for
    ma.lock();
    slow.stall_replies(true);
    ma.unlock();  // it ran; its answer is held back
    ASSERT_EQ(raw.cmd({"EXISTS", "re"}).integer, 0);
    mb.lock();  // the same owner, afresh, on another client
    const auto fence = mb.lease().fence();
    const auto before = raw.calls("evalsha") + raw.calls("eval");
    slow.stall_replies(false);
    std::this_thread::sleep_for(1500ms);  // a release sent again would have come by now
    EXPECT_EQ(raw.calls("evalsha") + raw.calls("eval"), before)
        << "a lost release of an owner others may hold was sent again";
    EXPECT_EQ(raw.cmd({"HGET", "re", "one-owner"}).str, "1");
    EXPECT_EQ(raw.cmd({"HGET", "re", ""}).str, std::to_string(fence));
    mb.unlock();
    EXPECT_EQ(raw.cmd({"EXISTS", "re"}).integer, 0);
}

TEST(ReentrantMutex, ALostReleaseOfAReentryLeavesTheOuterHoldingHeld) {
    // The inner release runs and its answer is lost: sent again, it would count the outer
    // holding down too, and hand the lock to another while its owner holds it.
    BehindASlowLink s;
    auto ma = s.a.reentrant_mutex("re");  // the client's own owner
    auto& slow = s.slow;
    auto& b = s.b;
    auto raw = s.srv.raw();
    ma.lock();
    ma.unlock();  // the release's script is known: no NOSCRIPT to wait for
    ma.lock();
    ma.lock();
    const auto before = raw.calls("evalsha") + raw.calls("eval");
    slow.stall_replies(true);  // requests still reach the server: the script runs
    ma.unlock();
    EXPECT_GT(raw.calls("evalsha") + raw.calls("eval"), before) << "the inner release ran";
    slow.stall_replies(false);  // a release sent again now would connect, and run
    std::this_thread::sleep_for(1500ms);
    EXPECT_EQ(raw.cmd({"EXISTS", "re"}).integer, 1) << "the outer holding's count was taken";
    EXPECT_FALSE(b.reentrant_mutex("re").try_lock()) << "taken from its holding owner";
    EXPECT_EQ(ma.hold_count(), 1u);
    ma.unlock();
    EXPECT_TRUE(eventually([&] {
        return raw.cmd({"EXISTS", "re"}).integer == 0;
    })) << "the last release freed it";
}

TEST(ReentrantMutex, AnotherThreadIsAnotherOwner) {
    RedisServer srv;
    auto c = deadbolt::Client::connect(srv.url());
    auto m = c.reentrant_mutex("re");
    std::lock_guard lk(m);
    bool other = true;
    std::thread([&] { other = m.try_lock(); }).join();
    EXPECT_FALSE(other);
}

TEST(ReentrantMutex, TwoHandlesOfOneOwnerIdAgreeOnTheCount) {
    RedisServer srv;
    auto a = deadbolt::Client::connect(srv.url());
    auto b = deadbolt::Client::connect(srv.url());
    auto ma = a.reentrant_mutex("shared-owner", {}, "job-7");
    auto mb = b.reentrant_mutex("shared-owner", {}, "job-7");
    auto other = b.reentrant_mutex("shared-owner", {}, "job-8");
    ASSERT_TRUE(ma.try_lock());
    ASSERT_TRUE(mb.try_lock());
    EXPECT_FALSE(other.try_lock());
    EXPECT_EQ(srv.raw().cmd({"HGET", "shared-owner", "job-7"}).str, "2");
    ma.unlock();
    EXPECT_FALSE(other.try_lock());  // job-7 still holds it once
    mb.unlock();
    EXPECT_TRUE(other.try_lock());
    other.unlock();
}

TEST(ReentrantMutex, HandlesOfOneClientShareReentryInOneThread) {
    RedisServer srv;
    auto c = deadbolt::Client::connect(srv.url());
    auto a = c.reentrant_mutex("re");
    auto b = c.reentrant_mutex("re");  // as Redisson's RLocks of one client
    a.lock();
    ASSERT_TRUE(b.try_lock());
    EXPECT_EQ(b.lease().fence(), a.lease().fence()) << "one holding, entered twice";
    EXPECT_EQ(srv.raw().cmd({"HGET", "re", a.owner()}).str, "2");
    a.unlock();
    EXPECT_EQ(srv.raw().cmd({"HGET", "re", a.owner()}).str, "1");
    b.unlock();
    EXPECT_EQ(srv.raw().cmd({"EXISTS", "re"}).integer, 0);
}

// The torture's restart and failover nemeses found it: data rolled back to a snapshot that
// shows our owner holding was taken for a re-entry, and the old fence was handed out again.
TEST(ReentrantMutex, AHoldingOfOursTheServerRolledBackIsNotAReentry) {
    RedisServer srv;
    auto c = deadbolt::Client::connect(srv.url());
    auto m = c.reentrant_mutex("re");
    auto raw = srv.raw();
    m.lock();
    const auto first = m.lease().fence();
    auto snapshot = raw.cmd({"DUMP", "re"}).str;
    m.unlock();
    raw.cmd({"RESTORE", "re", "30000", snapshot});  // as a restart from an older RDB would
    m.lock();
    EXPECT_GT(m.lease().fence(), first) << "a new holding gets a new fence";
    EXPECT_EQ(m.hold_count(), 1u);
    EXPECT_EQ(raw.cmd({"HGET", "re", m.owner()}).str, "1");
    m.unlock();
    EXPECT_EQ(raw.cmd({"EXISTS", "re"}).integer, 0) << "one unlock frees it";
}

TEST(ReentrantMutex, DeadHolderExpiresAndLossIsSignalled) {
    RedisServer srv;
    auto a = deadbolt::Client::connect(srv.url());
    auto b = deadbolt::Client::connect(srv.url());
    auto ma = a.reentrant_mutex("re", {.ttl = 300ms, .auto_renew = false});
    auto mb = b.reentrant_mutex("re");
    ma.lock();
    auto stop = ma.lease().stop_token();
    ASSERT_TRUE(mb.try_lock_for(5s));
    EXPECT_TRUE(stop.stop_requested());
    mb.unlock();
}

TEST(ReentrantMutex, KeyOfAnotherTypeIsAWrongTypeError) {
    RedisServer srv;
    auto c = deadbolt::Client::connect(srv.url());
    srv.raw().cmd({"SET", "plain", "token"});
    auto m = c.reentrant_mutex("plain");
    try {
        m.lock();
        FAIL() << "locked a key holding a string";
    } catch (const deadbolt::ServerError& e) {
        EXPECT_EQ(e.code(), deadbolt::make_error_code(deadbolt::errc::wrong_type));
    }
    std::error_code ec;
    EXPECT_FALSE(m.try_lock(ec));
    EXPECT_EQ(ec, deadbolt::make_error_code(deadbolt::errc::wrong_type));
    EXPECT_EQ(srv.raw().cmd({"GET", "plain"}).str, "token");
}

TEST(ReentrantMutex, UnlockWithoutHoldingDoesNothingAndLeaseThrows) {
    RedisServer srv;
    auto c = deadbolt::Client::connect(srv.url());
    auto m = c.reentrant_mutex("re");
    m.unlock();
    EXPECT_THROW(m.lease(), deadbolt::LockError);
    EXPECT_THROW(c.reentrant_mutex("re", {}, std::string(5000, 'o')), deadbolt::UsageError);
}
