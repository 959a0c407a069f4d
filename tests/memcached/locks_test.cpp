// deadbolt's memcached locks against a real server: what memcached cannot promise, refused or
// detected (short TTLs, evictions, restarts), a release that never deletes another's lock,
// waiting that backs off, and the faults that apply (a pause past the TTL, a restart, cut and
// stalled connections, eviction pressure with and without -M).
#include <gtest/gtest.h>

#include <atomic>
#include <charconv>
#include <cmath>
#include <future>
#include <thread>

#include "deadbolt/deadbolt.hpp"
#include "eventually.hpp"
#include "memcached_server.hpp"
#include "tcp_proxy.hpp"

using namespace std::chrono_literals;
using deadbolt::Client;
using deadbolt::test::eventually;
using deadbolt::test::McServer;
using deadbolt::test::TcpProxy;
using Clock = std::chrono::steady_clock;

namespace {

McServer& shared() {
    static McServer s;
    return s;
}

long long stat(const McServer& s, const std::string& name, int timeout_ms = 300) {
    auto text = s.raw("stats\r\n", timeout_ms);
    auto at = text.find("STAT " + name + " ");
    if (at == std::string::npos) return -1;
    at += 6 + name.size();
    long long v = 0;
    std::from_chars(text.data() + at, text.data() + text.size(), v);
    return v;
}

// Fills the server with items of like's size (so in its slab class, whose oldest items go
// first when the server may evict), as busy cache traffic does.
void fill(const McServer& s, const std::string& like) {
    auto size = s.raw("mg " + like + " s\r\n");  // "HD s<size>"
    const std::string value(std::stoul(size.substr(size.find(" s") + 2)), 'y');
    std::string text;
    for (int i = 0; i < 100000; ++i) {
        auto key = std::to_string(1000000 + i);
        key = "f" + key.substr(key.size() - (like.size() - 1));
        text += "ms " + key + " " + std::to_string(value.size()) + " T0 q\r\n" + value + "\r\n";
    }
    s.raw(text, 2000);
}

TEST(McLocks, ATtlUnderTwoSecondsIsRefusedWithTheReason) {
    auto c = Client::connect(shared().url());
    try {
        (void)c.acquire("short", {.ttl = 1999ms});
        FAIL() << "a 1999 ms TTL was taken";
    } catch (const deadbolt::UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("whole seconds"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(c.status("short").held);
    EXPECT_TRUE(c.acquire("short", {.ttl = 2s}).valid());
}

TEST(McLocks, LeasesPastThirtyDaysAreRefusedNotStoredAsDates) {
    // memcached reads a relative TTL of over 30 days as a Unix time, long past: it answers
    // STORED and ends the item at once.
    constexpr auto kMonth = std::chrono::hours(24 * 30);
    auto c = Client::connect(shared().url());
    auto held = c.acquire("month", {.ttl = 10s});
    EXPECT_THROW(held.extend(kMonth), deadbolt::UsageError);
    EXPECT_TRUE(held.valid());
    EXPECT_TRUE(c.status("month").held) << "a refused extension ended the lock";
    held.extend(kMonth - 1h);
    EXPECT_TRUE(c.status("month").held) << "an extension of under 30 days ended the lock";
    EXPECT_THROW((void)c.acquire("delayed", {.ttl = kMonth, .lock_delay = 1h}),
                 deadbolt::UsageError);
    EXPECT_FALSE(c.status("delayed").held);
    // The longest: a 30-day TTL is cut to the longest memcached reads as relative.
    auto longest = c.acquire("month-long", {.ttl = kMonth, .auto_renew = false});
    EXPECT_TRUE(c.status("month-long").held) << "the longest TTL was read as a date";
    // A permit's extension.
    auto permits = c.permit_semaphore("month-permits", 1, {.ttl = 10s});
    auto permit = permits.acquire();
    EXPECT_THROW((void)permits.extend(permit.token(), kMonth), deadbolt::UsageError);
    EXPECT_EQ(permits.available(), 0) << "a refused permit extension ended the permit";
}

TEST(McLocks, ABucketOrLatchOfThirtyDaysOrMoreIsKept) {
    constexpr auto kMonth = std::chrono::hours(24 * 30);
    McServer s;  // its own: what this test stores stays for a month
    auto c = Client::connect(s.url());
    // A bucket that refills over more than 30 days.
    auto slow = c.rate_limiter("monthly", {.rate = 1, .per = kMonth, .burst = 2});
    EXPECT_TRUE(slow.try_acquire().allowed);
    EXPECT_TRUE(slow.try_acquire().allowed);
    EXPECT_FALSE(slow.try_acquire().allowed) << "the bucket ended at once: nothing is limited";
    // A latch for 30 days.
    auto latch = c.latch("month-latch");
    EXPECT_TRUE(latch.try_set_count(2, kMonth));
    EXPECT_EQ(latch.count(), 2) << "the latch opened at once";
}

TEST(McLocks, AReleaseAfterExpiryNeverDeletesTheNextHoldersLock) {
    auto a = Client::connect(shared().url()), b = Client::connect(shared().url());
    auto old = a.acquire("expired", {.ttl = 2s, .auto_renew = false});
    auto mine = b.acquire("expired", {}, {.deadline = Clock::now() + 10s});
    EXPECT_GT(mine.fence(), old.fence());
    EXPECT_THROW(old.release(), deadbolt::LockError);
    auto st = b.status("expired");
    EXPECT_TRUE(st.held) << "the stale release deleted the next holder's lock";
    EXPECT_NO_THROW(mine.release());
    EXPECT_FALSE(b.status("expired").held);
}

TEST(McLocks, AReleaseWhoseCasMovedDeletesItsOwnLockAndNoOtherOne) {
    auto c = Client::connect(shared().url());
    auto value_of = [](const std::string& key) {  // "VA <n>\r\n<value>\r\n", or ""
        auto text = shared().raw("mg " + key + " v\r\n");
        auto body = text.find("\r\n");
        if (!text.starts_with("VA ") || body == std::string::npos) return std::string();
        return text.substr(body + 2, std::stoul(text.substr(3, body - 3)));
    };
    // Written again with its own value by another hand: the CAS the grant got has moved,
    // and the item is still this holding's.
    auto held = c.acquire("cas-moved", {.ttl = 30s, .auto_renew = false});
    const auto token = value_of("cas-moved");
    ASSERT_FALSE(token.empty());
    EXPECT_EQ(
        shared().raw("ms cas-moved " + std::to_string(token.size()) + " T30\r\n" + token + "\r\n"),
        "HD\r\n");
    EXPECT_NO_THROW(held.release());
    EXPECT_EQ(value_of("cas-moved"), "") << "the release found its lock by its value";
    // Another value under the name: not this holding's, left in place, and the release says so.
    auto lost = c.acquire("cas-moved", {.ttl = 30s, .auto_renew = false});
    EXPECT_EQ(shared().raw("ms cas-moved 5 T30\r\nother\r\n"), "HD\r\n");
    EXPECT_THROW(lost.release(), deadbolt::LockError);
    EXPECT_EQ(value_of("cas-moved"), "other") << "a release deleted what was not its own";
    shared().raw("md cas-moved\r\n");
}

TEST(McLocks, AServerThatMayEvictIsWarnedAbout) {
    McServer evicting({}, true);
    auto warned = Client::connect(evicting.url());
    ASSERT_EQ(warned.warnings().size(), 1u);
    EXPECT_NE(warned.warnings().front().find("-M"), std::string::npos) << warned.warnings().front();
    EXPECT_TRUE(Client::connect(evicting.url("?allow_evictions=true")).warnings().empty());
    EXPECT_TRUE(Client::connect(shared().url()).warnings().empty()) << "-M: nothing to warn of";
}

TEST(McLocks, EvictionCanDropAHeldLockUnlessTheServerRunsWithM) {
    for (bool evict : {true, false}) {
        McServer s({"-m", "2"}, evict);
        auto a = Client::connect(s.url("?allow_evictions=true"));
        std::atomic<int> lost{0};
        auto held = a.acquire(
            "evicted", {.ttl = 3s, .on_lost = [&](std::string_view, std::error_code) { ++lost; }});
        fill(s, "evicted");
        if (evict) {
            // What the warning is about: the lock went with the cache's oldest items, another
            // client takes it, and the holder hears of it at its next renewal.
            auto b = Client::connect(s.url("?allow_evictions=true"));
            EXPECT_TRUE(b.acquire("evicted", {}, {.deadline = Clock::now()}).valid());
            EXPECT_TRUE(eventually([&] { return lost.load() == 1; }, 10s));
        } else {
            EXPECT_TRUE(a.status("evicted").held) << "-M: the fill was refused, the lock stays";
            std::this_thread::sleep_for(1500ms);  // a renewal
            EXPECT_EQ(lost.load(), 0);
            EXPECT_TRUE(held.valid());
        }
    }
}

TEST(McLocks, ARestartForgetsTheLockTheHolderHearsOfItAndFencesStillRise) {
    McServer s;
    auto a = Client::connect(s.url());
    std::atomic<int> lost{0};
    auto held = a.acquire(
        "restart", {.ttl = 3s, .on_lost = [&](std::string_view, std::error_code) { ++lost; }});
    const auto fence = held.fence();
    s.stop(9);
    s.start();
    EXPECT_TRUE(eventually([&] { return lost.load() == 1; }, 10s));
    auto b = Client::connect(s.url());
    auto next = b.acquire("restart", {}, {.deadline = Clock::now() + 5s});
    EXPECT_GT(next.fence(), fence) << "the counter the restart lost came back below its fences";
}

TEST(McLocks, APausedServerPastTheTtlCostsTheHolderItsLease) {
    McServer s;
    auto a = Client::connect(s.url("?command_timeout=500ms"));
    std::atomic<int> lost{0};
    auto held = a.acquire(
        "paused", {.ttl = 2s, .on_lost = [&](std::string_view, std::error_code) { ++lost; }});
    s.pause();
    std::this_thread::sleep_for(4s);
    s.resume();
    EXPECT_TRUE(eventually([&] { return lost.load() == 1; }, 10s));
    EXPECT_TRUE(held.lost());
    auto b = Client::connect(s.url());
    EXPECT_GT(b.acquire("paused", {}, {.deadline = Clock::now() + 5s}).fence(), held.fence());
}

// memcached's clock is whole seconds of CLOCK_MONOTONIC (steady_clock here), raised by a timer
// that re-arms itself a second after each tick. The fraction of a second at which its ticks
// come, from the moment its `stats` time changes (to a few milliseconds).
// Or -1 when it could not tell within 3 s.
double tick_phase(const McServer& s) {
    const auto until = Clock::now() + 3s;
    long long before = -1;
    while (before < 0 && Clock::now() < until) before = stat(s, "time", 3);
    for (auto asked = Clock::now(); asked < until; asked = Clock::now()) {
        auto now = stat(s, "time", 3);
        if (now < 0 || now == before) continue;  // no answer within 3 ms, or no tick yet
        auto ns = asked.time_since_epoch() % std::chrono::seconds(1);
        return std::chrono::duration<double>(ns).count();
    }
    return -1;
}

TEST(McLocks, ALeaseOutlivesAPauseThatMakesTheServersClockSkipASecond) {
    // A tick held back past a second boundary (here by a pause; on a loaded machine by the
    // scheduler) jumps the server's clock by two, so an item stored just before it is older
    // than the clock says. A lease stored with one spare second then ended about 1 - phase
    // early, and a second client took the lock while its holder still counted it valid.
    using Secs = std::chrono::duration<double>;
    auto at = [](double secs) {
        return Clock::time_point(std::chrono::duration_cast<Clock::duration>(Secs(secs)));
    };
    McServer s;
    double phase = -1;
    // Until its ticks come mid-second: its first tick is at its start, so a server restarted
    // at the right time ticks mid-second (a pause that held a tick back moves them too).
    auto place = [&] {
        phase = tick_phase(s);
        double late = 0;  // how long after its start a server ticks first, as last seen
        for (int i = 0; i < 8 && (phase < 0.25 || phase > 0.75); ++i) {
            s.stop();
            double from = 0.5 - late;
            std::this_thread::sleep_until(
                at(std::floor(Secs(Clock::now().time_since_epoch()).count()) + 1 + from));
            s.start();
            phase = tick_phase(s);
            late = phase - from - std::floor(phase - from);
        }
        return phase >= 0.25 && phase <= 0.75;
    };
    ASSERT_TRUE(place()) << "no server ticked mid-second; phase " << phase;
    auto a = Client::connect(s.url()), b = Client::connect(s.url());
    deadbolt::Lease held;
    for (int tries = 0; tries < 10 && !held.valid(); ++tries) {
        // The next tick: the next whole second plus the phase.
        auto now = Secs(Clock::now().time_since_epoch()).count();
        auto tick = std::floor(now) + phase + (now - std::floor(now) > phase - 0.06 ? 1 : 0);
        std::this_thread::sleep_until(at(tick - 0.05));
        const auto clock_before = stat(s, "time", 3);
        if (clock_before < 0) continue;  // no answer in time: try at the next tick
        auto lease = a.acquire("skip", {.ttl = 2s, .auto_renew = false});
        if (Clock::now() > at(tick - 0.005)) {  // too slow to be sure it came before the tick
            lease.release();
            continue;
        }
        s.pause();
        std::this_thread::sleep_until(at(std::floor(tick) + 1.05));
        s.resume();
        std::this_thread::sleep_for(30ms);  // for the held-back tick
        if (stat(s, "time", 100) != clock_before + 2) {
            lease.release();  // the clock did not skip: this try tests nothing
            ASSERT_TRUE(place()) << "no server ticked mid-second; phase " << phase;
            a = Client::connect(s.url());  // the server may have been restarted
            b = Client::connect(s.url());
            continue;
        }
        held = std::move(lease);
    }
    ASSERT_TRUE(held.valid())
        << "no try in ten made the server's clock skip a second under a fresh lease";
    std::error_code ec;
    while (held.valid()) {
        auto taken = b.acquire("skip", {.ttl = 2s}, {.deadline = Clock::now()}, ec);
        ASSERT_FALSE(taken.valid() && Clock::now() < held.valid_until())
            << "the server dropped the lease early: a second holder while the first is valid";
        std::this_thread::sleep_for(20ms);
    }
    EXPECT_TRUE(b.acquire("skip", {.ttl = 2s}, {.deadline = Clock::now() + 10s}).valid());
}

TEST(McLocks, ACutConnectionIsNotALossAndAStalledOneIsOnceTheTtlPasses) {
    McServer s;
    TcpProxy proxy(s.port());
    const std::string via = "memcached://127.0.0.1:" + std::to_string(proxy.port());
    auto a = Client::connect(via + "?command_timeout=500ms");
    std::atomic<int> lost{0};
    auto held = a.acquire(
        "cut", {.ttl = 3s, .on_lost = [&](std::string_view, std::error_code) { ++lost; }});
    proxy.cut_all();
    std::this_thread::sleep_for(2500ms);  // renewals on new connections
    EXPECT_EQ(lost.load(), 0) << "a cut connection is not a lost lock: the item is still there";
    EXPECT_TRUE(held.valid());
    proxy.stall_replies(true);
    EXPECT_TRUE(eventually([&] { return lost.load() == 1; }, 10s));
    proxy.stall_replies(false);
    auto b = Client::connect(s.url());
    EXPECT_GT(b.acquire("cut", {}, {.deadline = Clock::now() + 10s}).fence(), held.fence());
}

TEST(McLocks, AStalledServerEndsAnAcquisitionAtItsDeadlineAndSaysWhy) {
    // The sockets block in the kernel for replies, bounded by their receive timeout: a server
    // that takes the requests and never answers must still end the call, not hang it.
    McServer s;
    TcpProxy proxy(s.port());
    auto a = Client::connect("memcached://127.0.0.1:" + std::to_string(proxy.port()) +
                             "?command_timeout=300ms");
    ASSERT_TRUE(a.acquire("stall", {}).valid());  // a connection is open and idle now
    proxy.stall_replies(true);
    auto call = std::async(std::launch::async, [&]() -> std::string {
        try {
            a.acquire("stall2", {}, {.deadline = Clock::now() + 2s});
            return "granted";
        } catch (const deadbolt::Error& e) {
            return e.what();
        }
    });
    const bool ended = call.wait_for(30s) == std::future_status::ready;
    proxy.stall_replies(false);  // a hung call ends now, and fails the checks below
    EXPECT_TRUE(ended) << "a stalled read did not end at the deadline";
    EXPECT_NE(call.get().find("did not answer in time"), std::string::npos);
}

TEST(McLocks, AReentrantReleaseSparesTheOwnersNextHolding) {
    // An owner's token is the same from one holding to the next, so a release sent again late
    // (from the background, after a lost answer) may find the owner's next holding under the
    // name: a new value with a new fence. It must leave that alone. The next holding is
    // written here by hand, in the layout "<fence> <holds> <owner>".
    McServer s;
    auto a = Client::connect(s.url());
    deadbolt::MutexOptions o;
    o.ttl = 5s;
    auto m = a.reentrant_mutex("re", o);
    m.lock();
    const std::string next = std::to_string(m.lease().fence() + 100) + " 1 " + m.owner();
    ASSERT_EQ(s.raw("set re 0 30 " + std::to_string(next.size()) + "\r\n" + next + "\r\n"),
              "STORED\r\n");
    m.unlock();
    EXPECT_EQ(s.raw("mg re v\r\n"), "VA " + std::to_string(next.size()) + "\r\n" + next + "\r\n")
        << "the release took the owner's next holding";
}

TEST(McLocks, AWaiterLooksAgainWithBackoffNotInALoop) {
    auto a = Client::connect(shared().url()), b = Client::connect(shared().url());
    auto held = a.acquire("backoff");
    auto commands = [] { return stat(shared(), "cmd_set") + stat(shared(), "cmd_get"); };
    const auto before = commands();
    EXPECT_THROW(b.acquire("backoff", {}, {.deadline = Clock::now() + 3s}), deadbolt::LockError);
    const auto looks = commands() - before;
    // After the first attempt each look is one read, at most 500 ms apart after the first few:
    // about a dozen in 3 s, where a loop would make thousands.
    EXPECT_GE(looks, 3);
    EXPECT_LE(looks, 40);
}

}  // namespace

namespace {

TEST(McMajority, OneServerDownOfThreeIsRiddenOutTwoAreNot) {
    McServer a, b, c;
    const std::string url = "memcached://" + a.address() + "," + b.address() + "," + c.address() +
                            "?command_timeout=300ms";
    auto one = Client::connect(url), two = Client::connect(url);
    auto held = one.acquire("majority", {.ttl = 3s});
    c.stop();
    EXPECT_THROW(two.acquire("majority", {}, {.deadline = Clock::now()}), deadbolt::LockError)
        << "two of three still hold it";
    EXPECT_NO_THROW(held.release());
    auto next = two.acquire("majority", {}, {.deadline = Clock::now() + 5s});
    EXPECT_GT(next.fence(), held.fence()) << "the majority's fence counters rose";
    next.release();
    b.stop();
    try {
        (void)two.acquire("majority", {}, {.deadline = Clock::now() + 1s});
        FAIL() << "one server of three granted a lock";
    } catch (const deadbolt::Error& e) {
        EXPECT_TRUE(e.retryable()) << e.what();
    }
    EXPECT_THROW((void)two.semaphore("majority:s", 2), deadbolt::UsageError)
        << "counts cannot be merged from several servers";
}

TEST(McMajority, AStalledFirstServerIsRiddenOutByTheOthers) {
    // A round reads its servers in turn: the first one's read waits to the round's deadline,
    // and the others' replies, long come, must still be read then, not timed out unread.
    McServer a, b, c;
    TcpProxy proxy(a.port());
    const std::string url = "memcached://127.0.0.1:" + std::to_string(proxy.port()) + "," +
                            b.address() + "," + c.address() + "?command_timeout=1s";
    auto client = Client::connect(url);
    client.acquire("stalled-first", {.ttl = 10s}).release();  // connections to all three
    proxy.stall_replies(true);
    std::string why;
    try {
        auto held = client.acquire("stalled-first", {.ttl = 10s}, {.deadline = Clock::now() + 5s});
        EXPECT_TRUE(held.valid());
    } catch (const deadbolt::Error& e) {
        why = e.what();
    }
    proxy.stall_replies(false);
    EXPECT_EQ(why, "") << "two of three servers answered";
}

}  // namespace

// memcached 1.6's metadump ends its lines with a bare \n (END alone with \r\n): a listing of a
// server with any item on it waited for a terminator it never saw, and timed out.
TEST(McAdmin, ListFindsTheHeldLocksAmongOtherItems) {
    auto& s = shared();
    auto c = Client::connect(s.url());
    s.raw("ms not-a-lock 2 T0\r\nhi\r\n");
    auto a = c.acquire("listed:a");
    auto b = c.acquire("listed:b");
    auto found = c.list("listed:*");
    ASSERT_EQ(found.size(), 2u);
    EXPECT_EQ(found[0].name, "listed:a");
    EXPECT_EQ(found[1].name, "listed:b");
    EXPECT_EQ(found[0].status.kind, "mutex");
    b.release();
    EXPECT_EQ(c.list("listed:*").size(), 1u);
}
