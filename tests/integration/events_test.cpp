// Events: the observer hears every attempt, grant, refusal, renewal, loss, release and lost
// reply of a client's locks, with name, kind and timings.
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <thread>

#include "acquire_options.hpp"
#include "deadbolt/deadbolt.hpp"
#include "redis_server.hpp"
#include "tcp_proxy.hpp"

using namespace std::chrono_literals;
using deadbolt::errc;
using deadbolt::LockEventKind;
using deadbolt::test::no_wait;
using deadbolt::test::RedisServer;
using Clock = std::chrono::steady_clock;

namespace {

struct Heard {
    LockEventKind kind;
    std::string name, primitive;
    std::chrono::microseconds took;
    std::chrono::milliseconds waited;
    std::uint64_t fence;
    std::error_code error;
};

// Collects what an observer hears, from any thread.
struct Ear {
    std::mutex m;
    std::vector<Heard> heard;

    deadbolt::ClientOptions options() {
        deadbolt::ClientOptions o;
        o.observer = [this](const deadbolt::LockEvent& e) {
            std::lock_guard lk(m);
            heard.push_back({e.kind, std::string(e.name), std::string(e.primitive), e.took,
                             e.waited, e.fence, e.error});
        };
        return o;
    }
    std::vector<Heard> of(LockEventKind kind) {
        std::lock_guard lk(m);
        std::vector<Heard> out;
        std::copy_if(heard.begin(), heard.end(), std::back_inserter(out),
                     [&](const Heard& h) { return h.kind == kind; });
        return out;
    }
    bool wait_for(LockEventKind kind, std::size_t n = 1) {
        for (auto until = Clock::now() + 10s; Clock::now() < until;
             std::this_thread::sleep_for(10ms))
            if (of(kind).size() >= n) return true;
        return false;
    }
};

}  // namespace

TEST(Events, AGrantARenewalAReleaseAndARefusalAreHeard) {
    RedisServer srv;
    Ear ear;
    auto c = deadbolt::Client::connect(srv.url(), ear.options());
    auto lease = c.acquire("job", {.ttl = 300ms});
    auto granted = ear.of(LockEventKind::granted);
    ASSERT_EQ(granted.size(), 1u);
    EXPECT_EQ(granted[0].name, "job");
    EXPECT_EQ(granted[0].primitive, "mutex");
    EXPECT_EQ(granted[0].fence, lease.fence());
    EXPECT_GT(granted[0].took.count(), 0);
    ASSERT_TRUE(ear.wait_for(LockEventKind::renewed));  // every 100 ms
    EXPECT_EQ(ear.of(LockEventKind::renewed)[0].name, "job");

    // Another client's attempt is refused while job is held, then it gives up.
    Ear other;
    auto d = deadbolt::Client::connect(srv.url(), other.options());
    EXPECT_THROW(d.acquire("job", {}, {.deadline = Clock::now() + 200ms}), deadbolt::LockError);
    EXPECT_GE(other.of(LockEventKind::refused).size(), 1u);
    auto gave_up = other.of(LockEventKind::gave_up);
    ASSERT_EQ(gave_up.size(), 1u);
    EXPECT_EQ(gave_up[0].error, errc::not_acquired);
    EXPECT_GE(gave_up[0].waited, 200ms);

    lease.release();
    auto released = ear.of(LockEventKind::released);
    ASSERT_EQ(released.size(), 1u);
    EXPECT_FALSE(released[0].error);

    // Each primitive says what it is.
    auto rw = c.rwlock("shelf");
    rw.lock_shared();
    rw.unlock_shared();
    c.acquire("q", deadbolt::LockMode::fair, {}).release();
    auto g = ear.of(LockEventKind::granted);
    ASSERT_EQ(g.size(), 3u);
    EXPECT_EQ(g[1].primitive, "read");
    EXPECT_EQ(g[2].primitive, "fair");
}

TEST(Events, ALossIsHeardOnceWithWhy) {
    RedisServer srv;
    Ear ear;
    auto c = deadbolt::Client::connect(srv.url(), ear.options());
    auto lease = c.acquire("job", {.ttl = 300ms});
    srv.raw().cmd({"DEL", "job"});  // taken from under the holder
    ASSERT_TRUE(ear.wait_for(LockEventKind::lost));
    auto lost = ear.of(LockEventKind::lost);
    ASSERT_EQ(lost.size(), 1u);
    EXPECT_EQ(lost[0].error, errc::not_owner);
    std::error_code ec;
    lease.release(ec);
    EXPECT_EQ(ec, errc::not_owner);
    auto released = ear.of(LockEventKind::released);
    ASSERT_EQ(released.size(), 1u);
    EXPECT_EQ(released[0].error, errc::not_owner) << "it was no longer ours";
}

TEST(Events, ALostReplyAndAFailedRenewalAreHeard) {
    RedisServer srv;
    deadbolt::test::TcpProxy proxy(srv.port());
    Ear ear;
    auto c = deadbolt::Client::connect(proxy.url() + "?command_timeout=200ms", ear.options());
    auto held = c.acquire("held", {.ttl = 1500ms});
    proxy.stall_replies(true);
    std::error_code ec;
    c.acquire("lost-reply", {}, no_wait(), ec);
    EXPECT_EQ(ec, errc::unknown_outcome);
    auto unknown = ear.of(LockEventKind::unknown_outcome);
    ASSERT_EQ(unknown.size(), 1u);
    EXPECT_EQ(unknown[0].name, "lost-reply");
    // The renewal of `held` gets no answer either, and is retried.
    EXPECT_TRUE(ear.wait_for(LockEventKind::renew_failed));
    proxy.stall_replies(false);
}

TEST(Events, AWaiterRidingOutAServerRestartSaysSo) {
    RedisServer srv;
    Ear ear;
    // Calls give up within 100 ms, so the outage (300 ms) surfaces as errors ridden out, not
    // as one call that reconnects inside its own deadline.
    auto c = deadbolt::Client::connect(srv.url() + "?command_timeout=100ms", ear.options());
    srv.stop();
    std::thread restart([&] {
        std::this_thread::sleep_for(300ms);
        srv.start();
    });
    auto lease = c.acquire("job", {}, {.deadline = Clock::now() + 10s});
    restart.join();
    EXPECT_TRUE(lease.valid());
    EXPECT_GE(ear.of(LockEventKind::retrying).size(), 1u);
    EXPECT_EQ(ear.of(LockEventKind::granted).size(), 1u);
}

TEST(Events, AThrowingObserverDoesNotBreakTheLock) {
    RedisServer srv;
    deadbolt::ClientOptions o;
    o.observer = [](const deadbolt::LockEvent&) { throw std::runtime_error("metrics down"); };
    auto c = deadbolt::Client::connect(srv.url(), o);
    auto lease = c.acquire("job");
    EXPECT_TRUE(lease.valid());
    lease.release();
}
