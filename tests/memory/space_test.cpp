// memory:// as users' tests use it: clients of one name share a space, and memory::Space drives
// the faults (a holding lost, a reply lost, a stall, the clock moved) that the real engines'
// fixtures make with signals and proxies. What every engine does is in the conformance suites.
#include <gtest/gtest.h>
#include <unistd.h>

#include <asio/use_future.hpp>
#include <atomic>
#include <future>
#include <string>
#include <thread>

#include "code_of.hpp"
#include "deadbolt/async.hpp"
#include "deadbolt/deadbolt.hpp"
#include "deadbolt/memory.hpp"
#include "eventually.hpp"

using namespace std::chrono_literals;
using deadbolt::Client;
using deadbolt::errc;
using deadbolt::memory::Call;
using deadbolt::memory::Space;
using deadbolt::test::code_of;
using deadbolt::test::eventually;
using Clock = std::chrono::steady_clock;

namespace {

// A space of the test's own.
std::string space_name() {
    return ::testing::UnitTest::GetInstance()->current_test_info()->name();
}

Client connect(const std::string& query = "") {
    return Client::connect("memory://" + space_name() + query);
}

}  // namespace

TEST(MemorySpace, ClientsOfOneNameShareLocksAndOtherNamesDoNot) {
    auto a = connect(), b = connect();
    auto elsewhere = Client::connect("memory://" + space_name() + "-other");
    auto held = a.acquire("job");
    EXPECT_FALSE(b.mutex("job").try_lock());
    EXPECT_TRUE(elsewhere.mutex("job").try_lock());
    held.release();
    EXPECT_TRUE(b.mutex("job").try_lock());
}

TEST(MemorySpace, ASpaceEndsWithItsLastUser) {
    std::uint64_t fence = 0;
    {
        auto a = connect();
        a.acquire("job").release();
        fence = a.acquire("job").fence();
    }
    EXPECT_EQ(fence, 2u);
    // Nobody used it since: the next client starts a new space, whose first fence is 1.
    EXPECT_EQ(connect().acquire("job").fence(), 1u);
}

TEST(MemorySpace, PrefixesKeepClientsApart) {
    auto a = connect("?prefix=a:"), b = connect("?prefix=b:");
    auto held = a.acquire("job");
    EXPECT_TRUE(b.mutex("job").try_lock());
    ASSERT_EQ(a.list().size(), 1u);
    EXPECT_EQ(a.list().front().name, "job");
}

TEST(MemorySpace, ALostHoldingIsHeardAtOnceAndItsWaiterGetsIn) {
    Space space(space_name());
    auto a = connect(), b = connect();
    std::atomic<int> lost{0};
    auto held = a.acquire(
        "job", {.ttl = 60s, .on_lost = [&](std::string_view, std::error_code) { ++lost; }});
    auto waiter = std::async(
        std::launch::async, [&] { return b.acquire("job", {}, {.deadline = Clock::now() + 20s}); });
    EXPECT_EQ(space.lose("job"), 1);
    EXPECT_TRUE(eventually([&] { return held.stop_token().stop_requested(); }));
    EXPECT_EQ(lost.load(), 1);
    // Woken by the loss, not by the 60 s TTL (past its deadline).
    auto got = waiter.get();
    EXPECT_GT(got.fence(), held.fence());
    EXPECT_EQ(space.lose("nothing-held"), 0);
}

TEST(MemorySpace, ALossIsToldOnceEvenWhenItsReleaseIsRetriedAfterItsHandleIsGone) {
    Space space(space_name());
    auto a = connect();
    std::atomic<int> lost{0};
    {
        auto held = a.acquire(
            "job", {.ttl = 60s, .on_lost = [&](std::string_view, std::error_code) { ++lost; }});
        space.lose("job");
        ASSERT_TRUE(eventually([&] { return held.lost(); }));
        space.lose_replies(1, Call::release);
    }  // released unanswered: retried in the background, which finds it gone, handle and all
    std::this_thread::sleep_for(500ms);  // the retry comes at once, then every 20 ms..1 s
    EXPECT_EQ(lost.load(), 1);
}

TEST(MemorySpace, ALostAcquireReplyLeavesNoStrayHolding) {
    Space space(space_name());
    auto a = connect();
    space.lose_replies(1, Call::acquire);
    // The first attempt was granted but unanswered: the client undoes it and tries again.
    auto l = a.acquire("job", {}, {.deadline = Clock::now() + 10s});
    auto s = a.status("job");
    EXPECT_EQ(s.holders, 1);
    EXPECT_EQ(s.last_fence, l.fence());
    EXPECT_EQ(l.fence(), 2u) << "the unanswered grant drew fence 1";
}

TEST(MemorySpace, ALostReleaseReplyIsUnknownYetTheLockIsFree) {
    Space space(space_name());
    auto a = connect(), b = connect();
    auto held = a.acquire("job");
    space.lose_replies(1, Call::release);
    EXPECT_EQ(code_of([&] { held.release(); }), errc::unknown_outcome);
    EXPECT_TRUE(b.mutex("job").try_lock()) << "the release was carried out";
}

TEST(MemorySpace, AReentrysLostReleaseIsNotSentAgainWhileItsOwnerHoldsOn) {
    // A re-entry's release counts its owner's holds down by one: sent again after its reply
    // was lost, it would take the outer holding's count too, and hand the lock to another
    // while its owner holds it.
    Space space(space_name());
    auto a = connect(), b = connect();
    for (std::string owner : {"", "one-owner"}) {  // the client's own, and one given
        SCOPED_TRACE(owner.empty() ? "default owner" : owner);
        auto ma = a.reentrant_mutex("job", {}, owner);
        auto mb = b.reentrant_mutex("job");
        ma.lock();
        ma.lock();
        space.lose_replies(1, Call::release);  // the inner release: carried out, unheard
        ma.unlock();
        std::this_thread::sleep_for(500ms);  // a retry would come at once, then every 20 ms..1 s
        EXPECT_EQ(ma.hold_count(), 1u);
        EXPECT_TRUE(ma.lease().is_current());
        EXPECT_FALSE(mb.try_lock()) << "taken from its holding owner";
        ma.unlock();
        EXPECT_TRUE(mb.try_lock()) << "the last release freed it";
        mb.unlock();
    }
}

TEST(MemorySpace, AReentrantReleaseRetriedLateSparesTheOwnersNextHolding) {
    // An owner's token is the same from one holding to the next: a release whose answers are
    // lost must not take the owner's next holding (an owner given by the user is not sent
    // again; one sent again touches only the hold with its grant's fence).
    Space space(space_name());
    auto a = connect(), b = connect();
    auto ma = a.reentrant_mutex("job", {}, "one-owner");
    auto mb = b.reentrant_mutex("job", {}, "one-owner");
    ma.lock();
    space.lose_replies(3, Call::release);  // the release and its next two tries: done, unheard
    ma.unlock();
    mb.lock();
    std::this_thread::sleep_for(500ms);  // the retries come at once, then every 20 ms..1 s
    EXPECT_TRUE(mb.lease().is_current()) << "a release retried late took the owner's next holding";
    EXPECT_EQ(a.status("job").holders, 1);
    mb.unlock();
}

TEST(MemorySpace, LostRepliesCountOnlyTheirKind) {
    Space space(space_name());
    auto a = connect();
    space.lose_replies(2, Call::check);
    auto held = a.acquire("job");  // an acquisition: not a check
    EXPECT_EQ(code_of([&] { (void)held.is_current(); }), errc::unknown_outcome);
    EXPECT_EQ(code_of([&] { (void)held.is_current(); }), errc::unknown_outcome);
    EXPECT_TRUE(held.is_current());
}

TEST(MemorySpace, AStallTimesCallsOutUntilResumed) {
    Space space(space_name());
    auto a = connect("?command_timeout=100ms"), b = connect("?command_timeout=100ms");
    auto held = a.acquire("job", {.ttl = 300ms});
    space.stall();
    EXPECT_EQ(code_of([&] { (void)b.status("job"); }), errc::timeout);
    // Renewals time out too: the holder hears its lease ran out rather than holding on blind.
    EXPECT_TRUE(eventually([&] { return held.stop_token().stop_requested(); }));
    auto later = std::async(std::launch::async,
                            [&] { return b.acquire("job", {}, {.deadline = Clock::now() + 20s}); });
    std::this_thread::sleep_for(200ms);
    EXPECT_EQ(later.wait_for(0s), std::future_status::timeout) << "got in during the stall";
    space.resume();
    EXPECT_TRUE(later.get().valid());
}

TEST(MemorySpace, AdvancingPastTheTtlEndsTheHoldingAndItsHolderHears) {
    Space space(space_name());
    auto a = connect(), b = connect();
    std::atomic<int> lost{0};
    auto held = a.acquire("job", {.ttl = 30s,
                                  .auto_renew = false,
                                  .on_lost = [&](std::string_view, std::error_code) { ++lost; }});
    EXPECT_FALSE(b.mutex("job").try_lock());
    space.advance(31s);
    EXPECT_FALSE(held.valid()) << "the lease is measured on the space's clock";
    EXPECT_TRUE(eventually([&] { return held.lost(); }));
    EXPECT_EQ(lost.load(), 1);
    EXPECT_TRUE(held.stop_token().stop_requested()) << "first asked for after the loss";
    EXPECT_TRUE(b.mutex("job").try_lock());
}

TEST(MemorySpace, AdvancingWithinTheTtlKeepsARenewedHolding) {
    Space space(space_name());
    auto a = connect(), b = connect();
    auto held = a.acquire("job", {.ttl = 30s});
    for (int i = 0; i < 4; ++i) {  // 80 s in all, 20 s at a time: each renewal keeps it
        space.advance(20s);
        EXPECT_TRUE(eventually([&] { return a.status("job").ttl > 15s; })) << i;
    }
    EXPECT_FALSE(held.lost());
    EXPECT_TRUE(held.valid());
    EXPECT_FALSE(b.mutex("job").try_lock());
}

TEST(MemorySpace, AdvancingRefillsRateLimitersAndEndsLatches) {
    Space space(space_name());
    auto a = connect();
    auto limiter = a.rate_limiter("api", {.rate = 1, .per = 1h, .burst = 1});
    EXPECT_TRUE(limiter.try_acquire().allowed);
    auto refused = limiter.try_acquire();
    EXPECT_FALSE(refused.allowed);
    EXPECT_GT(refused.retry_in, 59min);
    space.advance(1h);
    EXPECT_TRUE(limiter.try_acquire().allowed);

    auto latch = a.latch("start");
    ASSERT_TRUE(latch.try_set_count(2, 10s));
    auto waiter = std::async(std::launch::async, [&] { return latch.wait_for(20s); });
    space.advance(11s);  // a latch opens by itself at its TTL
    EXPECT_TRUE(waiter.get());
    EXPECT_EQ(latch.count(), 0);
}

TEST(MemorySpace, AnAsynchronousWaiterIsWokenByAnAdvance) {
    Space space(space_name());
    auto a = connect(), b = connect();
    auto held = a.acquire("job", {.ttl = 60s, .auto_renew = false});
    auto waiting =
        deadbolt::async_acquire(b, "job", {}, {.deadline = Clock::now() + 20s}, asio::use_future);
    EXPECT_EQ(waiting.wait_for(100ms), std::future_status::timeout);
    space.advance(61s);
    EXPECT_GT(waiting.get().fence(), held.fence());
}

TEST(MemorySpace, PutIfCurrentWritesWhatTheSpaceShowsAndOnlyWhileHeld) {
    Space space(space_name());
    auto a = connect();
    auto held = a.acquire("job");
    EXPECT_TRUE(held.put_if_current("record", "v1"));
    EXPECT_EQ(space.value("record"), "v1");
    space.lose("job");
    EXPECT_FALSE(held.put_if_current("record", "v2"));
    EXPECT_EQ(space.value("record"), "v1");
    EXPECT_EQ(space.value("never-written"), std::nullopt);
}

TEST(MemorySpace, StatusListAndForceUnlockSeeEveryClient) {
    auto a = connect(), op = connect();
    auto held = a.acquire("orders:1", {.ttl = 60s});
    auto readers = a.acquire("doc", deadbolt::LockMode::shared, {});
    auto s = op.status("orders:1");
    EXPECT_EQ(s.kind, "mutex");
    ASSERT_EQ(s.held_by.size(), 1u);
    EXPECT_EQ(s.held_by.front().pid, ::getpid());
    EXPECT_TRUE(s.held_by.front().since.has_value());
    EXPECT_GT(s.ttl, 50s);
    EXPECT_EQ(op.status("doc").kind, "readers");
    auto listed = op.list("orders:*");
    ASSERT_EQ(listed.size(), 1u);
    EXPECT_EQ(listed.front().name, "orders:1");
    EXPECT_EQ(op.force_unlock("orders:1"), "mutex");
    EXPECT_TRUE(eventually([&] { return held.lost(); }));
    EXPECT_EQ(op.force_unlock("orders:1"), "free");
    EXPECT_GT(op.acquire("orders:1").fence(), held.fence());
}

TEST(MemorySpace, BadUrlsNamesAndClocksAreRefused) {
    using deadbolt::UsageError;
    EXPECT_EQ(code_of([] { (void)Client::connect("memory://"); }), errc::invalid_url);
    EXPECT_EQ(code_of([] { (void)Client::connect("memory://?prefix=a"); }), errc::invalid_url);
    EXPECT_EQ(code_of([] { (void)Client::connect("memory://a%zz"); }), errc::invalid_url);
    EXPECT_EQ(code_of([] { (void)Client::connect("memory://a%00b"); }), errc::invalid_url);
    EXPECT_EQ(code_of([] { (void)Client::connect("memory://a?password=x"); }), errc::invalid_url);
    EXPECT_EQ(code_of([] { (void)Client::connect("memory://a?bogus=1"); }), errc::invalid_url);
    EXPECT_THROW(Space(""), UsageError);
    Space space(space_name());
    EXPECT_THROW(space.advance(-1ms), UsageError);
    // Names with any bytes are names, percent-decoded as in every URL.
    auto a = Client::connect("memory://with%20space");
    auto m = a.mutex(std::string("a\0b", 3));
    EXPECT_TRUE(m.try_lock());
    EXPECT_EQ(Space("with space").lose(std::string("a\0b", 3)), 1);
}
