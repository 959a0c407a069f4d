// The asynchronous API: completion tokens (callback, use_future, use_awaitable, deferred),
// waiting woken by a release, deadlines, cancellation through a slot and a stop token, and
// a thousand acquisitions in flight from one thread.
#include "deadbolt/async.hpp"

#include <gtest/gtest.h>

#include <asio/bind_cancellation_slot.hpp>
#include <asio/cancellation_signal.hpp>
#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/experimental/deferred.hpp>
#include <asio/io_context.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/use_future.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "deadbolt/deadbolt.hpp"
#include "eventually.hpp"
#include "process_threads.hpp"
#include "redis_server.hpp"
#include "redlock_nodes.hpp"
#include "tcp_proxy.hpp"

using namespace std::chrono_literals;
using deadbolt::Client;
using deadbolt::errc;
using deadbolt::Lease;
using deadbolt::test::RedisServer;
using Clock = std::chrono::steady_clock;

namespace {

// What a callback completion delivered, once.
struct Delivered {
    std::promise<std::pair<std::error_code, Lease>> p;
    auto handler() {
        return [this](std::error_code ec, Lease l) { p.set_value({ec, std::move(l)}); };
    }
    std::pair<std::error_code, Lease> get() { return p.get_future().get(); }
};

// async_lock through a callback: what it completed with.
template <class Lock>
std::error_code async_locked(Lock& lock, const deadbolt::AcquireOptions& how) {
    std::promise<std::error_code> done;
    deadbolt::async_lock(lock, how, [&](std::error_code ec) { done.set_value(ec); });
    return done.get_future().get();
}

}  // namespace

TEST(Async, AsyncLockFillsTheHandleAndUnlockReleasesIt) {
    RedisServer srv;
    auto c = Client::connect(srv.url());
    auto other = Client::connect(srv.url());
    auto m = c.mutex("job");
    ASSERT_FALSE(async_locked(m, {}));
    EXPECT_TRUE(m.owns_lock());
    EXPECT_GT(m.lease().fence(), 0u);
    EXPECT_TRUE(c.status("job").held);
    // A handle that holds its lock says so instead of waiting for itself.
    EXPECT_EQ(async_locked(m, {}), errc::invalid_argument);
    m.unlock();
    EXPECT_FALSE(c.status("job").held);
    // A FairMutex the same way; a deadline ends a wait, and a release wakes one.
    auto f = c.fair_mutex("queue");
    auto g = other.fair_mutex("queue");
    ASSERT_FALSE(async_locked(f, {}));
    EXPECT_EQ(async_locked(g, {.deadline = Clock::now() + 200ms}), errc::not_acquired);
    EXPECT_FALSE(g.owns_lock());
    std::thread release([&] {
        std::this_thread::sleep_for(200ms);
        f.unlock();
    });
    EXPECT_FALSE(async_locked(g, {.deadline = Clock::now() + 20s}));
    release.join();
    EXPECT_TRUE(g.owns_lock());
    EXPECT_GT(g.lease().fence(), 0u);
}

TEST(Async, AClientThatDiesInItsOwnHandlerEndsCleanly) {
    // Over Redlock every round runs on the loop, so the client's last reference can go in a
    // handler: the loop then ends there, and nothing it had queued runs on what is gone.
    deadbolt::test::RedlockNodes nodes(3);
    std::promise<std::error_code> done;
    auto c = std::make_shared<Client>(Client::connect(nodes.url()));
    deadbolt::async_acquire(*c, "job", {}, {}, [c, &done](std::error_code ec, Lease l) mutable {
        l.release();  // blocking, in a handler: the loop runs meanwhile
        c.reset();
        done.set_value(ec);
    });
    c.reset();
    EXPECT_FALSE(done.get_future().get());
    // Released by a majority before the client went: anyone may take it now. (A minority
    // node may keep the key until its TTL: the loop ended with whatever it had not sent.)
    EXPECT_TRUE(Client::connect(nodes.url()).mutex("job").try_lock());
}

TEST(Async, ACallbackGetsTheLeaseAndAsyncReleaseFreesIt) {
    RedisServer srv;
    auto c = Client::connect(srv.url());
    Delivered got;
    deadbolt::async_acquire(c, "job", {}, {}, got.handler());
    auto [ec, lease] = got.get();
    ASSERT_FALSE(ec) << ec.message();
    EXPECT_TRUE(lease.valid());
    EXPECT_GT(lease.fence(), 0u);
    EXPECT_TRUE(c.status("job").held);
    std::promise<std::error_code> released;
    deadbolt::async_release(lease, [&](std::error_code e) { released.set_value(e); });
    EXPECT_FALSE(released.get_future().get());
    EXPECT_FALSE(lease.held());  // taken by async_release
    EXPECT_FALSE(c.status("job").held);
}

TEST(Async, ALoopHandlePostsInOrderOnTheLoopThreadAndTellsALeasesLoop) {
    RedisServer srv;
    auto c = Client::connect(srv.url());
    auto loop = deadbolt::detail::loop_of(c);
    ASSERT_TRUE(loop);
    EXPECT_FALSE(loop.here());
    std::vector<int> order;
    std::promise<bool> ran;
    for (int i = 0; i < 3; ++i) loop.post([&, i] { order.push_back(i); });
    loop.post([&] { ran.set_value(loop.here()); });
    EXPECT_TRUE(ran.get_future().get()) << "a post runs on the loop's own thread";
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
    auto lease = c.acquire("job");
    EXPECT_TRUE(deadbolt::detail::loop_of(lease) == loop);
    EXPECT_TRUE(lease.held()) << "asking for the loop leaves the lease as it was";
    EXPECT_FALSE(deadbolt::detail::loop_of(Client::connect(srv.url())) == loop);
    deadbolt::detail::LoopHandle empty;
    empty.post([] { FAIL() << "an empty handle runs nothing"; });
    EXPECT_FALSE(empty.here());
}

TEST(Async, UseFutureAndDeferredWork) {
    RedisServer srv;
    auto c = Client::connect(srv.url());
    auto l = deadbolt::async_acquire(c, "a", {}, {}, asio::use_future).get();
    EXPECT_TRUE(l.valid());
    // A deferred operation starts only when it is given its handler; its arguments are its own.
    auto op = deadbolt::async_acquire(c, std::string("b"), {}, {}, asio::experimental::deferred);
    EXPECT_FALSE(c.status("b").held);
    Delivered got;
    std::move(op)(got.handler());
    auto [ec, lb] = got.get();
    EXPECT_FALSE(ec);
    EXPECT_TRUE(c.status("b").held);
    deadbolt::async_release(lb, asio::use_future).get();
    EXPECT_FALSE(c.status("b").held);
}

#ifdef ASIO_HAS_CO_AWAIT  // (clang-tidy's clang 14 lacks the coroutines of libstdc++ 12)
TEST(Async, CoroutinesAwaitAcquireAndRelease) {
    RedisServer srv;
    auto c = Client::connect(srv.url());
    asio::io_context io;
    std::uint64_t fence = 0;
    bool held_inside = false;
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
            Lease l = co_await deadbolt::async_acquire(c, "co", {}, {}, asio::use_awaitable);
            fence = l.fence();
            held_inside = c.status("co").held;
            co_await deadbolt::async_release(l, asio::use_awaitable);
        },
        asio::detached);
    io.run();
    EXPECT_GT(fence, 0u);
    EXPECT_TRUE(held_inside);
    EXPECT_FALSE(c.status("co").held);
}
#endif

TEST(Async, ACancellationSlotOrAStopTokenEndsAWait) {
    RedisServer srv;
    auto a = Client::connect(srv.url()), b = Client::connect(srv.url());
    auto held = a.acquire("job", {.ttl = 60s});
    asio::cancellation_signal signal;
    Delivered by_slot;
    deadbolt::async_acquire(b, "job", {}, {},
                            asio::bind_cancellation_slot(signal.slot(), by_slot.handler()));
    std::this_thread::sleep_for(100ms);
    signal.emit(asio::cancellation_type::terminal);
    EXPECT_EQ(by_slot.get().first, errc::cancelled);

    std::stop_source stop;
    Delivered by_token;
    deadbolt::async_acquire(b, "job", {}, {.cancel = stop.get_token()}, by_token.handler());
    std::this_thread::sleep_for(100ms);
    stop.request_stop();
    EXPECT_EQ(by_token.get().first, errc::cancelled);
    EXPECT_EQ(a.status("job").last_fence, held.fence());  // nothing was taken meanwhile
}

TEST(Async, BadInputCompletesWithAnError) {
    RedisServer srv;
    auto c = Client::connect(srv.url());
    Delivered empty_name, bad_ttl;
    deadbolt::async_acquire(c, "", {}, {}, empty_name.handler());
    deadbolt::async_acquire(c, "x", {.ttl = 0ms}, {}, bad_ttl.handler());
    EXPECT_EQ(empty_name.get().first, errc::invalid_argument);
    EXPECT_EQ(bad_ttl.get().first, errc::invalid_argument);
    EXPECT_FALSE(c.status("x").held);
}

TEST(Async, AThousandAcquisitionsInFlightFromOneThread) {
    RedisServer srv;
    deadbolt::test::TcpProxy proxy(srv.port());
    auto c = Client::connect(proxy.url());
    // The first opens the loop's connection; then every reply is held back, so the server
    // holds all thousand only if they were all sent without waiting for one another.
    deadbolt::async_acquire(c, "warm-up", {}, {}, asio::use_future).get().release();
    proxy.stall_replies(true);
    constexpr int kN = 1000;
    std::mutex m;
    std::condition_variable cv;
    std::vector<Lease> leases;
    int failed = 0;
    for (int i = 0; i < kN; ++i)  // all started from this thread, none waited for
        deadbolt::async_acquire(c, "job" + std::to_string(i), {}, {},
                                [&](std::error_code ec, Lease l) {
                                    std::lock_guard lk(m);
                                    if (ec) ++failed;
                                    leases.push_back(std::move(l));
                                    cv.notify_all();
                                });
    bool all_sent = false;
    for (int i = 0; i < 100 && !all_sent; ++i) {
        all_sent = srv.raw().cmd({"DBSIZE"}).integer >= 2 * kN + 1;  // + warm-up's fence
        if (!all_sent) std::this_thread::sleep_for(10ms);
    }
    {
        std::lock_guard lk(m);
        EXPECT_TRUE(leases.empty());  // no reply came through
    }
    proxy.stall_replies(false);
    EXPECT_TRUE(all_sent) << srv.raw().cmd({"DBSIZE"}).integer << " keys";
    std::unique_lock lk(m);
    ASSERT_TRUE(cv.wait_for(lk, 60s, [&] { return leases.size() == kN; }));
    EXPECT_EQ(failed, 0);
    std::set<std::string> names;
    for (auto& l : leases) names.insert(l.name());
    EXPECT_EQ(names.size(), std::size_t{kN});
    lk.unlock();
    std::atomic<int> released{0};
    for (auto& l : leases)
        deadbolt::async_release(l, [&](std::error_code ec) {
            if (!ec) ++released;
        });
    for (int i = 0; i < 600 && released < kN; ++i) std::this_thread::sleep_for(100ms);
    EXPECT_EQ(released.load(), kN);
    EXPECT_FALSE(c.status("job0").held);
}

// Requests go out as they are made; what the socket does not take at once must still go,
// in order, once the server reads again (here 16 MB against a few MB of socket buffers).
TEST(Async, RequestsMoreThanTheSocketTakesAtOnceAllGoOut) {
    RedisServer srv;
    deadbolt::test::TcpProxy proxy(srv.port());
    auto c = Client::connect(proxy.url());
    deadbolt::async_acquire(c, "warm-up", {}, {}, asio::use_future).get().release();
    proxy.freeze_requests(true);
    std::this_thread::sleep_for(100ms);  // the proxy's pump sees it (it polls every 20 ms)
    constexpr int kN = 2000;
    std::vector<std::future<Lease>> got;
    got.reserve(kN);
    for (int i = 0; i < kN; ++i) {
        std::string name(deadbolt::kMaxNameBytes - 8, 'n');
        name += std::to_string(i);
        got.push_back(deadbolt::async_acquire(c, name, {.ttl = 60s}, {}, asio::use_future));
    }
    std::this_thread::sleep_for(200ms);
    EXPECT_EQ(srv.raw().cmd({"DBSIZE"}).integer, 1);  // the warm-up's fence: nothing got through
    proxy.freeze_requests(false);
    int granted = 0;
    const auto until = Clock::now() + 60s;
    for (auto& f : got)
        if (f.wait_until(until) == std::future_status::ready && f.get().held()) ++granted;
    EXPECT_EQ(granted, kN);
    EXPECT_GE(srv.raw().cmd({"DBSIZE"}).integer, kN + 1);
}

TEST(Async, TheLoopStartsAtTheFirstAsynchronousCallAndWaitsShareTheSubscriber) {
    using deadbolt::test::threads_of_this_process;
    RedisServer srv;
    const int before = threads_of_this_process();
    auto c = Client::connect(srv.url());
    c.acquire("job").release();  // blocking: the renewer, and the holder's subscriber
    EXPECT_EQ(threads_of_this_process(), before + 2);
    deadbolt::async_acquire(c, "job", {}, {}, asio::use_future).get().release();
    EXPECT_EQ(threads_of_this_process(), before + 3) << "the loop";
    auto held = c.acquire("held");
    auto waited = deadbolt::async_acquire(c, "held", {}, {.deadline = Clock::now() + 100ms},
                                          asio::use_future);
    EXPECT_THROW(waited.get(), std::system_error);
    EXPECT_EQ(threads_of_this_process(), before + 3) << "a real wait uses the same subscriber";
}

TEST(Async, AnAttemptAndAReleaseSurviveAScriptFlush) {
    RedisServer srv;
    auto c = Client::connect(srv.url());
    deadbolt::async_acquire(c, "warm-up", {}, {}, asio::use_future).get().release();
    // The loop's connection meets NOSCRIPT now: it must run the scripts with EVAL instead.
    srv.raw().cmd({"SCRIPT", "FLUSH"});
    auto l = deadbolt::async_acquire(c, "job", {}, {}, asio::use_future).get();
    EXPECT_GT(l.fence(), 0u);
    EXPECT_TRUE(c.status("job").held);
    srv.raw().cmd({"SCRIPT", "FLUSH"});
    deadbolt::async_release(l, asio::use_future).get();
    EXPECT_FALSE(c.status("job").held);
}

TEST(Async, AWaitCancelledAsItsClientClosesLeavesTheLine) {
    // The client's last handle goes in the cancelled wait's own handler, so the client closes
    // on the loop right after the wait's abandon went out. On a server that never ran that
    // script an EVALSHA of it is answered NOSCRIPT, and a closed client sends nothing again:
    // the place in line would stay until its waiter_ttl, and each release would wake nobody.
    RedisServer srv;
    auto a = Client::connect(srv.url());
    auto held = a.acquire("job", {.ttl = 60s});
    auto raw = srv.raw();
    auto b = std::make_shared<Client>(Client::connect(srv.url()));
    std::stop_source stop;
    std::promise<std::error_code> done;
    deadbolt::async_acquire(*b, "job", {.waiter_ttl = 60s}, {.cancel = stop.get_token()},
                            [b, &done](std::error_code ec, const Lease&) mutable {
                                b.reset();
                                done.set_value(ec);
                            });
    b.reset();
    ASSERT_TRUE(eventually([&] { return raw.cmd({"ZCARD", "{job}:waiters"}).integer == 1; }));
    stop.request_stop();
    EXPECT_EQ(done.get_future().get(), errc::cancelled);
    EXPECT_TRUE(eventually([&] { return raw.cmd({"ZCARD", "{job}:waiters"}).integer == 0; }, 3s));
}

TEST(Async, AnAbandonStillOnItsWayWhenTheClientClosesReachesTheServer) {
    // A cancelled wait leaves its place in line with a request nobody waits for. When the
    // client closes while that request is held up on its way, the request must still get
    // there within its deadline, not be dropped with the client: the place would stay until
    // its waiter_ttl, and every release meanwhile would wake a waiter that is gone.
    RedisServer srv;
    TcpProxy slow(srv.port());
    auto a = Client::connect(srv.url());
    auto held = a.acquire("job", {.ttl = 60s});
    auto raw = srv.raw();
    std::thread resume;
    {
        auto b = Client::connect("redis://127.0.0.1:" + std::to_string(slow.port()));
        std::stop_source stop;
        std::promise<std::error_code> done;
        deadbolt::async_acquire(b, "job", {.waiter_ttl = 60s}, {.cancel = stop.get_token()},
                                [&done](std::error_code ec, const Lease&) { done.set_value(ec); });
        ASSERT_TRUE(eventually([&] { return raw.cmd({"ZCARD", "{job}:waiters"}).integer == 1; }));
        slow.stall_requests(true);
        stop.request_stop();  // the abandon goes out, and waits in the proxy
        ASSERT_EQ(done.get_future().get(), errc::cancelled);
        resume = std::thread([&slow] {
            std::this_thread::sleep_for(300ms);
            slow.stall_requests(false);
        });
    }  // b closes, off its loop, while its abandon is held back
    resume.join();
    EXPECT_TRUE(eventually(
        [&] {
            return raw.cmd({"ZCARD", "{job}:waiters"}).integer == 0;
        },
        3s))
        << "the place in line stayed: the abandon was dropped with the client";
}
