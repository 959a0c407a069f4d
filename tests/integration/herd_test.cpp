// Herds (issue 30 item 4): a release wakes the first waiter in the name's line, not all of them,
// so draining N waiters costs O(N) scripts, not O(N^2). Counted from INFO commandstats: the
// counts are what the clients did, whatever the machine's speed.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <future>
#include <memory>
#include <thread>
#include <vector>

#include "deadbolt/deadbolt.hpp"
#include "eventually.hpp"
#include "redis_server.hpp"

using namespace std::chrono_literals;
using deadbolt::test::eventually;
using deadbolt::test::RedisServer;
using Clock = std::chrono::steady_clock;

namespace {

// A holder far longer than any test: a waiter that missed its wake-up would sleep past its
// deadline. A standby look (a fifth of waiter_ttl after a wake-up nobody took up) far beyond
// any handoff here, so no count below depends on how fast the machine is.
const deadbolt::MutexOptions kLong{.ttl = 120s, .waiter_ttl = 30s};

long long scripts(deadbolt::test::Raw& raw) {
    return raw.calls("evalsha") + raw.calls("eval");
}

long long in_line(deadbolt::test::Raw& raw, const std::string& name) {
    return raw.cmd({"ZCARD", "{" + name + "}:waiters"}).integer;
}

// Takes a lock of some kind on a client and hands back how to give it up; empty when it did
// not come before the deadline.
using Take = std::function<std::function<void()>(deadbolt::Client&, const std::string& name)>;

struct HerdKind {
    const char* what;
    Take take;  // exclusive: one holder at a time (a Semaphore of one permit too)
};

deadbolt::AcquireOptions within(std::chrono::seconds s) {
    return {.deadline = Clock::now() + s};
}

std::function<void()> giving_up(deadbolt::Lease l) {
    if (!l) return {};
    auto held = std::make_shared<deadbolt::Lease>(std::move(l));
    return [held] { held->release(); };
}

const std::vector<HerdKind>& herd_kinds() {
    static const std::vector<HerdKind> all = {
        {"Mutex",
         [](deadbolt::Client& c, const std::string& n) {
             std::error_code ec;
             return giving_up(c.acquire(n, kLong, within(60s), ec));
         }},
        {"RWLock writer",
         [](deadbolt::Client& c, const std::string& n) {
             return giving_up(c.acquire(n, deadbolt::LockMode::write, kLong, within(60s)));
         }},
        {"ReentrantMutex",
         [](deadbolt::Client& c, const std::string& n) -> std::function<void()> {
             auto m = std::make_shared<deadbolt::ReentrantMutex>(c.reentrant_mutex(n, kLong));
             if (!m->try_lock_for(60s)) return {};
             return [m] { m->unlock(); };
         }},
        {"MultiLock",
         [](deadbolt::Client& c, const std::string& n) {
             return giving_up(c.acquire_all({n, n + "-b"}, kLong, within(60s)));
         }},
        {"Semaphore of one permit",
         [](deadbolt::Client& c, const std::string& n) -> std::function<void()> {
             auto s = std::make_shared<deadbolt::Semaphore>(c.semaphore(n, 1, kLong));
             if (!s->try_acquire_for(60s)) return {};
             return [s] { s->release(); };
         }},
        {"LeaderElection candidate",
         [](deadbolt::Client& c, const std::string& n) {
             return giving_up(c.campaign(n, "me", kLong, within(60s)));
         }},
    };
    return all;
}

// What a herd of n waiters of kind cost, behind a holder of the same kind.
struct Drain {
    long long from_start = 0;    // scripts from the first waiter's first attempt
    long long from_release = 0;  // scripts from the holder's release
    int acquired = 0;            // waiters that got it
    int most_inside = 0;         // the most holders at once
    long long line_left = 0;     // line members left when all were done
};

Drain drain(RedisServer& srv, const HerdKind& kind, const std::string& name, int n) {
    auto raw = srv.raw();
    auto holder = deadbolt::Client::connect(srv.url());
    auto give_back = kind.take(holder, name);
    EXPECT_TRUE(give_back) << kind.what << ": the holder did not get it";
    std::vector<deadbolt::Client> clients;
    for (int i = 0; i < n; ++i) clients.push_back(deadbolt::Client::connect(srv.url()));
    Drain d;
    const auto before = scripts(raw);
    std::atomic<int> inside{0}, most{0}, got{0};
    std::vector<std::thread> waiters;
    for (auto& c : clients)
        waiters.emplace_back([&] {
            auto give = kind.take(c, name);
            if (!give) return;
            int now = ++inside;
            for (int seen = most; now > seen && !most.compare_exchange_weak(seen, now);) {
            }
            ++got;
            --inside;
            give();
        });
    // Every waiter stands in line (it listens) before the holder lets go.
    EXPECT_TRUE(eventually([&] { return in_line(raw, name) == n; }, 30s))
        << kind.what << ": " << in_line(raw, name) << " of " << n << " in line";
    const auto lined_up = scripts(raw);
    give_back();
    for (auto& t : waiters) t.join();
    d.from_start = scripts(raw) - before;
    d.from_release = scripts(raw) - lined_up;
    d.acquired = got;
    d.most_inside = most;
    d.line_left = raw.cmd({"EXISTS", "{" + name + "}:waiters"}).integer;
    return d;
}

}  // namespace

TEST(Herd, FiftyWaitersDrainWithFourScriptsEachOneHolderAtATime) {
    RedisServer srv;
    constexpr int kN = 50;
    auto d = drain(srv, herd_kinds().front(), "herd", kN);
    EXPECT_EQ(d.acquired, kN);
    EXPECT_EQ(d.most_inside, 1) << "two holders at once";
    // Each waiter: an attempt, one more once it listens (it lines up), the attempt its wake-up
    // brings (granted), its release; and the holder's release, plus one EVAL the first time
    // the server meets the release script. Every release woke every waiter before: 50 waiters
    // cost 50 * 49 / 2 = 1225 attempts more.
    EXPECT_LE(d.from_start, 4 * kN + 2) << d.from_start << " scripts for " << kN << " waiters";
    EXPECT_LE(d.from_release, 2 * kN + 2) << d.from_release << " scripts after the release";
    EXPECT_EQ(d.line_left, 0) << "the line outlived its waiters";
}

TEST(Herd, EveryKindThatWakesWaitersWakesOnePerRelease) {
    RedisServer srv;
    constexpr int kN = 8;
    for (const auto& kind : herd_kinds()) {
        auto d = drain(srv, kind, std::string("herd-") + kind.what, kN);
        EXPECT_EQ(d.acquired, kN) << kind.what;
        EXPECT_EQ(d.most_inside, 1) << kind.what << ": two holders at once";
        // Woken all at once, 8 waiters cost 28 attempts more than this.
        EXPECT_LE(d.from_release, 2 * kN + 2) << kind.what << ": " << d.from_release;
        EXPECT_EQ(d.line_left, 0) << kind.what;
    }
}

TEST(Herd, ReadersBehindAWriterGoInTogetherAndTheWriterBehindThemWaitsForTheLast) {
    RedisServer srv;
    auto raw = srv.raw();
    auto w = deadbolt::Client::connect(srv.url());
    // A fresh server meets each script once (NOSCRIPT, then EVAL); the readers would meet the
    // release's all at once. Load them first, as a server that ran a while has them.
    w.acquire("warm", deadbolt::LockMode::write, kLong).release();
    w.acquire("warm", deadbolt::LockMode::shared, kLong).release();
    auto held = w.acquire("rw", deadbolt::LockMode::write, kLong);
    constexpr int kN = 6;
    std::vector<deadbolt::Client> clients;
    for (int i = 0; i < kN; ++i) clients.push_back(deadbolt::Client::connect(srv.url()));
    std::atomic<int> reading{0}, read{0};
    std::promise<void> all_in;
    auto all_in_f = all_in.get_future().share();
    std::vector<std::thread> readers;
    for (auto& c : clients)
        readers.emplace_back([&] {
            deadbolt::Lease l;
            try {
                l = c.acquire("rw", deadbolt::LockMode::shared, kLong, within(60s));
            } catch (const std::exception&) {
                return;  // not let in: counted below
            }
            if (++reading == kN) all_in.set_value();
            all_in_f.wait_for(60s);  // every reader holds before any leaves: they share it
            ++read;
            l.release();
        });
    ASSERT_TRUE(eventually([&] { return in_line(raw, "rw") == kN; }, 30s));
    const auto lined_up = scripts(raw);
    held.release();
    for (auto& t : readers) t.join();
    EXPECT_EQ(read, kN) << "the readers did not all hold at once";
    // The writer's release, then one wake-up per reader, each let in by the one before: its
    // grant and its release.
    EXPECT_LE(scripts(raw) - lined_up, 2 * kN + 1);
    EXPECT_EQ(raw.cmd({"EXISTS", "{rw}:waiters"}).integer, 0);
}

TEST(Herd, AReleaseSkipsAWaiterWhoseClientIsGone) {
    RedisServer srv;
    auto raw = srv.raw();
    auto a = deadbolt::Client::connect(srv.url());
    auto b = deadbolt::Client::connect(srv.url());
    auto held = a.acquire("gone", kLong);
    auto got = std::async(std::launch::async, [&] {
        std::error_code ec;
        return b.acquire("gone", kLong, within(60s), ec);
    });
    ASSERT_TRUE(eventually([&] { return in_line(raw, "gone") == 1; }, 30s));
    // A waiter whose client died stands first in line: nobody listens on its inbox.
    const std::string inbox = "{deadbolt}:inbox:nobody-listens-here";
    raw.cmd({"ZADD", "{gone}:waiters", "0",
             "x" + std::to_string(inbox.size()) + ":" + inbox + "dead-token"});
    held.release();
    // Its deadline is 60 s and the holder's TTL 120 s: only the release can wake it this soon.
    ASSERT_EQ(got.wait_for(30s), std::future_status::ready) << "the release woke the dead waiter";
    EXPECT_TRUE(got.get().held());
    EXPECT_EQ(raw.cmd({"EXISTS", "{gone}:waiters"}).integer, 0) << "the dead waiter was dropped";
}

TEST(Herd, AWokenWaiterThatNeverComesLeavesTheLockToTheNextAfterAFifthOfWaiterTtl) {
    RedisServer srv;
    auto raw = srv.raw();
    // The next in line stands by for a fifth of waiter_ttl (200 ms) after the wake-up ahead.
    const deadbolt::MutexOptions o{.ttl = 120s, .waiter_ttl = 1s};
    auto a = deadbolt::Client::connect(srv.url());
    auto b = deadbolt::Client::connect(srv.url());
    auto held = a.acquire("stuck", o);
    auto got = std::async(std::launch::async, [&] {
        std::error_code ec;
        return b.acquire("stuck", o, within(60s), ec);
    });
    ASSERT_TRUE(eventually([&] { return in_line(raw, "stuck") == 1; }, 30s));
    // First in line: a waiter that listens, is woken, and dies before it comes for the lock
    // (this connection never attempts).
    const std::string inbox = "{deadbolt}:inbox:woken-then-killed";
    auto woken = srv.raw();
    woken.cmd({"SUBSCRIBE", inbox});
    raw.cmd({"ZADD", "{stuck}:waiters", "0",
             "x" + std::to_string(inbox.size()) + ":" + inbox + "its-token"});
    held.release();
    // b's deadline is 60 s and the holder's TTL 120 s: only its standby can wake it this soon.
    ASSERT_EQ(got.wait_for(30s), std::future_status::ready)
        << "the lock sat free while the next in line slept";
    EXPECT_TRUE(got.get().held());
}

TEST(Herd, AWaiterThatGivesUpLeavesNothingBehind) {
    RedisServer srv;
    auto raw = srv.raw();
    auto a = deadbolt::Client::connect(srv.url());
    auto b = deadbolt::Client::connect(srv.url());
    auto held = a.acquire("brief", kLong);
    auto gave_up = std::async(std::launch::async, [&] {
        std::error_code ec;
        b.acquire("brief", kLong, within(3s), ec);
        return ec;
    });
    ASSERT_TRUE(eventually([&] { return in_line(raw, "brief") == 1; }, 30s));
    // While it waits, the line expires by itself (nothing deadbolt writes lives forever).
    EXPECT_GT(raw.cmd({"PTTL", "{brief}:waiters"}).integer, 0);
    EXPECT_EQ(gave_up.get(), deadbolt::errc::not_acquired);
    EXPECT_EQ(raw.cmd({"EXISTS", "{brief}:waiters"}).integer, 0) << "it left its place behind";
    // A try-lock never lines up: it does not listen, so nobody could wake it.
    EXPECT_FALSE(b.mutex("brief").try_lock());
    EXPECT_EQ(raw.cmd({"EXISTS", "{brief}:waiters"}).integer, 0);
}

TEST(Herd, AForeignHoldersReleaseWakesNobodyAndTheWaiterComesAtItsExpiry) {
    RedisServer srv;
    auto raw = srv.raw();
    // redis-py's Lock: a token string with an expiry; its release is a plain compare-and-delete.
    raw.cmd({"SET", "py", "0123456789abcdef0123456789abcdef", "PX", "700"});
    auto c = deadbolt::Client::connect(srv.url());
    auto l = c.acquire("py", kLong, within(30s));
    EXPECT_TRUE(l.held()) << "woken at the foreign holder's expiry, as before there was a line";
}
