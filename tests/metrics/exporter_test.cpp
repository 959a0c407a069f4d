// deadbolt::metrics::Exporter: every lock on an engine as OpenMetrics families, counted from a
// listing (on memory://, in process), the census's arithmetic on hand-made listings, and the
// exporter's health when the engine stops answering.
#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <string>

#include "deadbolt/deadbolt.hpp"
#include "deadbolt/memory.hpp"
#include "deadbolt/metrics.hpp"
#include "eventually.hpp"
#include "metrics/census.hpp"
#include "scrape.hpp"

using namespace std::chrono_literals;
using deadbolt::Client;
using deadbolt::metrics::Exporter;
using deadbolt::metrics::ExporterOptions;
using deadbolt::test::eventually;
using deadbolt::test::http_get;
using deadbolt::test::sample;

namespace {

std::string space_name() {
    return std::string("exporter-") +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
}

Client connect(const std::string& query = "") {
    return Client::connect("memory://" + space_name() + query);
}

std::string locks(const std::string& kind, const std::string& name = "") {
    return "deadbolt_locks{engine=\"memory\",kind=\"" + kind + "\"" +
           (name.empty() ? "" : ",name=\"" + name + "\"") + "}";
}

ExporterOptions every_time() {
    ExporterOptions o;
    o.min_interval = 0ms;
    return o;
}

}  // namespace

TEST(Exporter, CountsEveryKindItsHoldersAndItsWaiters) {
    auto c = connect();
    Exporter e(connect(), "memory", every_time());
    auto m1 = c.acquire("orders:1");
    auto m2 = c.acquire("orders:2");
    auto r1 = c.acquire("report", deadbolt::LockMode::shared, {});
    auto r2 = c.acquire("report", deadbolt::LockMode::shared, {});
    auto sem = c.semaphore("pool", 3);
    sem.acquire();
    sem.acquire();
    // memory:// keeps a line for fair waiters (Redis keeps every waiter that listens).
    auto fair = c.acquire("fair", deadbolt::LockMode::fair, {});
    auto other = connect();
    auto waiter = std::async(std::launch::async,
                             [&] { return other.acquire("fair", deadbolt::LockMode::fair, {}); });
    EXPECT_TRUE(eventually([&] {
        return sample(e.text(), R"(deadbolt_lock_waiters{engine="memory",kind="mutex"})") == 1;
    }));
    auto t = e.text();
    EXPECT_EQ(sample(t, locks("mutex")), 3) << t;
    EXPECT_EQ(sample(t, R"(deadbolt_lock_holders{engine="memory",kind="mutex"})"), 3);
    EXPECT_EQ(sample(t, locks("readers")), 1);
    EXPECT_EQ(sample(t, R"(deadbolt_lock_holders{engine="memory",kind="readers"})"), 2);
    EXPECT_EQ(sample(t, locks("semaphore")), 1);
    EXPECT_EQ(sample(t, R"(deadbolt_lock_holders{engine="memory",kind="semaphore"})"), 2);
    EXPECT_EQ(sample(t, locks("leader")), 0) << "a kind nobody holds is 0, not absent";
    EXPECT_EQ(sample(t, R"(deadbolt_lock_fence_max{engine="memory"})"),
              static_cast<double>(std::max({m1.fence(), m2.fence(), fair.fence()})));
    EXPECT_GE(sample(t, R"(deadbolt_lock_oldest_holding_seconds{engine="memory",kind="mutex"})"),
              0);
    EXPECT_EQ(sample(t, R"(deadbolt_exporter_up{engine="memory"})"), 1);
    fair.release();
    auto next = waiter.get();
    m1.release();
    m2.release();
    next.release();
    t = e.text();
    EXPECT_EQ(sample(t, locks("mutex")), 0) << t;
    EXPECT_EQ(sample(t, R"(deadbolt_lock_waiters{engine="memory",kind="mutex"})"), 0);
}

TEST(Exporter, NamesCountUnderTheirFirstPatternOrOther) {
    auto c = connect();
    ExporterOptions o = every_time();
    o.name_patterns = {"orders:*", "order*"};
    Exporter e(connect(), "memory", o);
    auto a = c.acquire("orders:1");
    auto b = c.acquire("orderly");
    auto d = c.acquire("jobs:7");
    auto t = e.text();
    EXPECT_EQ(sample(t, locks("mutex", "orders:*")), 1) << t;
    EXPECT_EQ(sample(t, locks("mutex", "order*")), 1);
    EXPECT_EQ(sample(t, locks("mutex", "other")), 1);
    EXPECT_EQ(sample(t, locks("mutex")), -1) << "no series without the name label";
}

TEST(Exporter, OnlyThePatternsLocksAreLookedAt) {
    auto c = connect();
    ExporterOptions o = every_time();
    o.pattern = "orders:*";
    Exporter e(connect(), "memory", o);
    auto a = c.acquire("orders:1");
    auto b = c.acquire("jobs:7");
    EXPECT_EQ(sample(e.text(), locks("mutex")), 1);
}

TEST(Exporter, ScrapesWithinTheIntervalShareOneListing) {
    auto c = connect();
    ExporterOptions o;
    o.min_interval = 1h;
    Exporter shared(connect(), "memory", o);
    auto a = c.acquire("job");
    shared.text();
    auto t = shared.text();
    EXPECT_EQ(sample(t, R"(deadbolt_exporter_listings_total{engine="memory"})"), 1);
    EXPECT_EQ(sample(t, R"(deadbolt_exporter_scrapes_total{engine="memory"})"), 2);
    Exporter each(connect(), "memory", every_time());
    each.text();
    t = each.text();
    EXPECT_EQ(sample(t, R"(deadbolt_exporter_listings_total{engine="memory"})"), 2);
}

TEST(Exporter, AnEngineThatStopsAnsweringIsDownNotStale) {
    auto c = connect();
    deadbolt::memory::Space space(space_name());
    Exporter e(connect("?command_timeout=100ms"), "memory", every_time());
    auto a = c.acquire("job");
    EXPECT_EQ(sample(e.text(), locks("mutex")), 1);
    space.stall();
    auto t = e.text();
    space.resume();
    EXPECT_EQ(sample(t, R"(deadbolt_exporter_up{engine="memory"})"), 0) << t;
    EXPECT_EQ(sample(t, R"(deadbolt_exporter_listing_errors_total{engine="memory"})"), 1);
    EXPECT_EQ(sample(t, locks("mutex")), -1) << "the last listing's counts are not repeated";
    EXPECT_NE(e.last_error().find("stalled"), std::string::npos) << e.last_error();
    t = e.text();
    EXPECT_EQ(sample(t, R"(deadbolt_exporter_up{engine="memory"})"), 1);
    EXPECT_EQ(sample(t, locks("mutex")), 1);
    EXPECT_TRUE(e.last_error().empty());
}

TEST(Exporter, TheEndpointServesItOverHttp) {
    auto c = connect();
    Exporter e(connect(), "memory", every_time());
    deadbolt::metrics::Endpoint http(e, "127.0.0.1:0");
    auto a = c.acquire("job");
    auto got = http_get(http.port(), "/metrics");
    EXPECT_NE(got.find("200 OK"), std::string::npos) << got;
    EXPECT_NE(got.find(locks("mutex") + " 1"), std::string::npos) << got;
}

TEST(Exporter, BadOptionsAreUsageErrors) {
    ExporterOptions o;
    o.pattern = "";
    EXPECT_THROW(Exporter(connect(), "memory", o), deadbolt::UsageError);
    o = {};
    o.min_interval = -1ms;
    EXPECT_THROW(Exporter(connect(), "memory", o), deadbolt::UsageError);
    o = {};
    o.name_patterns = {"a*", "b*", "a*"};  // two series with one label set: a refused scrape
    EXPECT_THROW(Exporter(connect(), "memory", o), deadbolt::UsageError);
    o.name_patterns = {"other"};
    EXPECT_THROW(Exporter(connect(), "memory", o), deadbolt::UsageError);
    EXPECT_THROW(Exporter(std::function<deadbolt::Client()>{}, "memory"), deadbolt::UsageError);
}

TEST(Exporter, AClientItCannotMakeYetIsDownAndThenCounted) {
    int calls = 0;
    Exporter e(
        [&] {
            if (++calls == 1)
                throw deadbolt::ConnectionError(make_error_code(deadbolt::errc::connection_lost),
                                                "not yet");
            return connect();
        },
        "memory", {.min_interval = 0ms});
    auto t = e.text();
    EXPECT_EQ(sample(t, R"(deadbolt_exporter_up{engine="memory"})"), 0) << t;
    EXPECT_EQ(e.last_error(), "not yet");
    t = e.text();
    EXPECT_EQ(sample(t, R"(deadbolt_exporter_up{engine="memory"})"), 1) << t;
    e.text();
    EXPECT_EQ(calls, 2) << "connected once it could, then kept";
}

TEST(Census, TheOldestHoldingIsTheEarliestGrantAndUnknownKindsAreKept) {
    deadbolt::detail::Census c;
    c.engine = "redis";
    c.up = true;
    c.listed_at = std::chrono::system_clock::now();
    deadbolt::ListedLock a{"a", {}};
    a.status.held = true;
    a.status.kind = "mutex";
    a.status.holders = 1;
    a.status.last_fence = 42;
    a.status.held_by.push_back({"h", 1, c.listed_at - 90s, 10s, ""});
    deadbolt::ListedLock b = a;
    b.name = "b";
    b.status.last_fence = 7;
    b.status.held_by.front().since = c.listed_at - 30s;
    deadbolt::ListedLock foreign{"c", {}};
    foreign.status.held = true;
    foreign.status.kind = "latch";  // a kind the census does not know still counts
    foreign.status.held_by.push_back({"", 0, std::nullopt, -1ms, "another tool"});
    c.locks = {a, b, foreign};
    auto t = deadbolt::detail::census_text(c);
    EXPECT_EQ(sample(t, R"(deadbolt_lock_oldest_holding_seconds{engine="redis",kind="mutex"})"), 90)
        << t;
    EXPECT_EQ(sample(t, R"(deadbolt_locks{engine="redis",kind="latch"})"), 1);
    EXPECT_EQ(sample(t, R"(deadbolt_lock_oldest_holding_seconds{engine="redis",kind="latch"})"), -1)
        << "no grant time, no age";
    EXPECT_EQ(sample(t, R"(deadbolt_lock_fence_max{engine="redis"})"), 42);
    EXPECT_TRUE(t.ends_with("# EOF\n"));
}

TEST(Census, LabelValuesAreEscaped) {
    deadbolt::detail::Census c;
    c.engine = "redis";
    c.up = true;
    c.name_patterns = {"a\"b\\*"};
    auto t = deadbolt::detail::census_text(c);
    EXPECT_NE(t.find(R"(name="a\"b\\*")"), std::string::npos) << t;
}
