// deadbolt::metrics: what an application's lock events become in the OpenMetrics families, on
// memory:// (every primitive and fault, in process), and the /metrics endpoint over HTTP.
#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <numeric>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "deadbolt/deadbolt.hpp"
#include "deadbolt/memory.hpp"
#include "deadbolt/metrics.hpp"
#include "eventually.hpp"
#include "scrape.hpp"

using namespace std::chrono_literals;
using deadbolt::Client;
using deadbolt::metrics::Endpoint;
using deadbolt::metrics::Registry;
using deadbolt::test::eventually;
using deadbolt::test::http_get;
using deadbolt::test::sample;
using Clock = std::chrono::steady_clock;

namespace {

std::string space_url() {
    return std::string("memory://metrics-") +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
}

Client connect(const Registry& r) {
    deadbolt::ClientOptions o;
    o.observer = r.observer("memory");
    return Client::connect(space_url(), o);
}

const std::string kMutex = R"(engine="memory",primitive="mutex")";

std::string acquire_count(const std::string& outcome) {
    return "deadbolt_acquire_seconds_count{" + kMutex + ",outcome=\"" + outcome + "\"}";
}

}  // namespace

TEST(Metrics, AGrantAndItsReleaseAreCountedAndTheHoldingGaugeFollows) {
    Registry r;
    auto a = connect(r);
    auto held = a.acquire("job");
    auto t = r.text();
    EXPECT_EQ(sample(t, "deadbolt_holding{" + kMutex + "}"), 1);
    EXPECT_EQ(sample(t, acquire_count("granted")), 1);
    EXPECT_EQ(sample(t, "deadbolt_held_seconds_count{" + kMutex + "}"), -1) << "nothing ended";
    held.release();
    t = r.text();
    EXPECT_EQ(sample(t, "deadbolt_holding{" + kMutex + "}"), 0);
    EXPECT_EQ(sample(t, "deadbolt_held_seconds_count{" + kMutex + "}"), 1);
    EXPECT_EQ(sample(t, "deadbolt_waiting{" + kMutex + "}"), 0);
}

TEST(Metrics, OutcomesAndTheWaitingGaugeTellRefusedTimedOutAndWaitedGrants) {
    Registry r;
    auto a = connect(r), b = connect(r);
    auto held = b.acquire("job");
    EXPECT_FALSE(a.mutex("job").try_lock());          // no wait: refused
    EXPECT_FALSE(a.mutex("job").try_lock_for(50ms));  // waited to its deadline: timeout
    auto waiter = std::async(std::launch::async, [&] { return a.acquire("job"); });
    EXPECT_TRUE(
        eventually([&] { return sample(r.text(), "deadbolt_waiting{" + kMutex + "}") == 1; }));
    held.release();
    auto got = waiter.get();
    auto t = r.text();
    EXPECT_EQ(sample(t, "deadbolt_waiting{" + kMutex + "}"), 0);
    EXPECT_EQ(sample(t, acquire_count("refused")), 1);
    EXPECT_EQ(sample(t, acquire_count("timeout")), 1);
    EXPECT_EQ(sample(t, acquire_count("granted")), 2);
    EXPECT_EQ(sample(t, "deadbolt_holding{" + kMutex + "}"), 1);
}

// Threads of one client line up in the process before the engine sees them (the local queue):
// their refusals, timeouts and waits are counted as another client's are. They were not: a
// process's own contention (OpenCTI's 64 threads) left every metric flat.
TEST(Metrics, ContentionBetweenThreadsOfOneClientIsCountedToo) {
    Registry r;
    auto a = connect(r);
    auto held = a.acquire("job");
    EXPECT_FALSE(a.mutex("job").try_lock());
    EXPECT_FALSE(a.mutex("job").try_lock_for(50ms));
    auto waiter = std::async(std::launch::async, [&] { return a.acquire("job"); });
    EXPECT_TRUE(
        eventually([&] { return sample(r.text(), "deadbolt_waiting{" + kMutex + "}") == 1; }));
    held.release();
    auto got = waiter.get();
    auto t = r.text();
    EXPECT_EQ(sample(t, "deadbolt_waiting{" + kMutex + "}"), 0);
    EXPECT_EQ(sample(t, acquire_count("refused")), 1) << t;
    EXPECT_EQ(sample(t, acquire_count("timeout")), 1);
    EXPECT_EQ(sample(t, acquire_count("granted")), 2);
    EXPECT_EQ(sample(t, "deadbolt_holding{" + kMutex + "}"), 1);
}

TEST(Metrics, ALossIsCountedOnceAndEndsTheHoldingOnce) {
    Registry r;
    deadbolt::memory::Space space(space_url().substr(9));
    auto a = connect(r);
    auto held = a.acquire("job");
    space.lose("job");
    EXPECT_TRUE(eventually([&] { return held.lost(); }));
    EXPECT_EQ(sample(r.text(), "deadbolt_lost_total{" + kMutex + "}"), 1);
    EXPECT_EQ(sample(r.text(), "deadbolt_holding{" + kMutex + "}"), 0);
    std::error_code ec;
    held.release(ec);  // the release of a lost lease does not end it again
    EXPECT_TRUE(ec);
    EXPECT_EQ(sample(r.text(), "deadbolt_holding{" + kMutex + "}"), 0);
    EXPECT_EQ(sample(r.text(), "deadbolt_held_seconds_count{" + kMutex + "}"), 1);
}

TEST(Metrics, RenewalsAndLostRepliesAreCounted) {
    Registry r;
    deadbolt::memory::Space space(space_url().substr(9));
    auto a = connect(r);
    space.lose_replies(1, deadbolt::memory::Call::acquire);
    auto held = a.acquire("job", {.ttl = 30s}, {.deadline = Clock::now() + 10s});
    EXPECT_EQ(sample(r.text(), "deadbolt_unknown_outcomes_total{" + kMutex + "}"), 1);
    space.advance(20s);  // the renewal is due at once
    EXPECT_TRUE(eventually([&] {
        return sample(r.text(), "deadbolt_renewals_total{" + kMutex + ",result=\"renewed\"}") >= 1;
    }));
}

TEST(Metrics, NamesAreLabelsOnlyThroughPatterns) {
    Registry r({.name_patterns = {"orders:*"}});
    auto a = connect(r);
    auto one = a.acquire("orders:1"), two = a.acquire("orders:2"), other = a.acquire("jobs:9");
    auto t = r.text();
    EXPECT_EQ(sample(t, "deadbolt_holding{" + kMutex + ",name=\"orders:*\"}"), 2);
    EXPECT_EQ(sample(t, "deadbolt_holding{" + kMutex + ",name=\"other\"}"), 1);
    EXPECT_EQ(t.find("orders:1"), std::string::npos) << "a name became a label";
}

TEST(Metrics, TheTextIsOpenMetrics) {
    Registry r;
    auto a = connect(r);
    a.acquire("job").release();
    auto reader = a.acquire("doc", deadbolt::LockMode::shared, {});
    const auto t = r.text();
    ASSERT_TRUE(t.ends_with("# EOF\n"));
    // Every sample line belongs to a family declared before it, with a known suffix.
    const std::regex line(
        R"re(^(deadbolt_[a-z_]+?)(_bucket|_count|_sum|_total)?\{[^}]*\} [-+0-9.e]+$)re");
    std::istringstream in(t);
    std::string declared;
    for (std::string l; std::getline(in, l);) {
        if (l.starts_with("# TYPE ")) declared = l.substr(7, l.find(' ', 7) - 7);
        if (l.starts_with("#")) continue;
        std::smatch m;
        ASSERT_TRUE(std::regex_match(l, m, line)) << l;
        EXPECT_EQ(m[1].str(), declared) << l;
    }
    // Buckets are cumulative and +Inf is the count.
    const std::string granted = kMutex + ",outcome=\"granted\"";
    EXPECT_EQ(sample(t, "deadbolt_acquire_seconds_bucket{" + granted + ",le=\"+Inf\"}"),
              sample(t, acquire_count("granted")));
    EXPECT_LE(sample(t, "deadbolt_acquire_seconds_bucket{" + granted + ",le=\"0.0005\"}"),
              sample(t, "deadbolt_acquire_seconds_bucket{" + granted + ",le=\"1\"}"));
    EXPECT_EQ(sample(t, R"(deadbolt_holding{engine="memory",primitive="read"})"), 1);
}

TEST(Metrics, CollectHandsOverTheSeriesOfTheTextForABridge) {
    Registry r({.name_patterns = {"orders:*"}});
    auto a = connect(r);
    a.acquire("orders:1").release();
    auto kept = a.acquire("jobs:1");
    std::vector<deadbolt::metrics::Sample> seen;
    std::vector<std::vector<std::pair<std::string, std::string>>> labels;
    r.collect([&](const deadbolt::metrics::Sample& s) {
        seen.push_back(s);
        labels.emplace_back(s.labels.begin(), s.labels.end());  // views live for the call only
    });
    const auto t = r.text();
    auto find = [&](std::string_view family, const std::string& name, std::string_view extra = {}) {
        for (std::size_t i = 0; i < seen.size(); ++i) {
            const auto& l = labels[i];
            bool named = std::find(l.begin(), l.end(),
                                   std::pair<std::string, std::string>("name", name)) != l.end();
            bool more = extra.empty() || l.back().second == extra;
            if (seen[i].family == family && named && more) return static_cast<int>(i);
        }
        return -1;
    };
    int holding = find("deadbolt_holding", "other");
    ASSERT_GE(holding, 0);
    EXPECT_EQ(seen[holding].type, deadbolt::metrics::Sample::Type::gauge);
    EXPECT_EQ(seen[holding].value, 1);
    EXPECT_EQ(labels[holding][0], (std::pair<std::string, std::string>("engine", "memory")));
    int granted = find("deadbolt_acquire_seconds", "orders:*", "granted");
    ASSERT_GE(granted, 0);
    const auto& h = seen[granted];
    EXPECT_EQ(h.type, deadbolt::metrics::Sample::Type::histogram);
    EXPECT_EQ(h.unit, "seconds");
    EXPECT_EQ(h.counts.size(), h.bounds.size() + 1) << "a count per bucket and +Inf's";
    EXPECT_EQ(h.count, 1u);
    EXPECT_EQ(std::accumulate(h.counts.begin(), h.counts.end(), std::uint64_t{0}), h.count)
        << "counts per bucket, not cumulative";
    int lost = find("deadbolt_lost", "orders:*");
    ASSERT_GE(lost, 0);
    EXPECT_EQ(seen[lost].type, deadbolt::metrics::Sample::Type::counter);
    EXPECT_EQ(seen[lost].value, 0);
    EXPECT_EQ(seen[lost].count, 0u) << "a counter carries no histogram's count";
    EXPECT_TRUE(seen[lost].counts.empty());
    // The text is made of the same series: one sample line (or histogram) per series.
    std::size_t lines = 0;
    for (const auto& s : seen)
        lines += s.type == deadbolt::metrics::Sample::Type::histogram ? s.counts.size() + 2 : 1;
    std::size_t in_text = 0;
    std::istringstream in(t);
    for (std::string l; std::getline(in, l);) in_text += !l.starts_with("#");
    EXPECT_EQ(in_text, lines);
}

TEST(Metrics, TheEndpointServesTheTextOverHttp) {
    Registry r;
    auto a = connect(r);
    auto held = a.acquire("job");
    Endpoint e(r, "127.0.0.1:0");
    ASSERT_GT(e.port(), 0);
    auto got = http_get(e.port(), "/metrics");
    EXPECT_TRUE(got.starts_with("HTTP/1.0 200")) << got.substr(0, 200);
    EXPECT_NE(got.find(std::string("Content-Type: ") + Registry::kContentType), std::string::npos);
    auto body = got.substr(got.find("\r\n\r\n") + 4);
    EXPECT_EQ(sample(body, "deadbolt_holding{" + kMutex + "}"), 1);
    EXPECT_TRUE(body.ends_with("# EOF\n"));
    EXPECT_TRUE(http_get(e.port(), "/other").starts_with("HTTP/1.0 404"));
    // The port is taken now: a second endpoint there says so.
    EXPECT_THROW(Endpoint(r, "127.0.0.1:" + std::to_string(e.port())), deadbolt::ConnectionError);
}

TEST(Metrics, BadBucketsPatternsAndAddressesAreUsageErrors) {
    using deadbolt::UsageError;
    EXPECT_THROW(Registry({.buckets = {}}), UsageError);
    EXPECT_THROW(Registry({.buckets = {1, 0.5}}), UsageError);
    EXPECT_THROW(Registry({.buckets = {0, 1}}), UsageError);
    EXPECT_THROW(Registry({.buckets = {1, 1}}), UsageError);
    EXPECT_THROW(Registry({.name_patterns = {"orders:*", "orders:*"}}), UsageError)
        << "two series would share their labels";
    EXPECT_THROW(Registry({.name_patterns = {"other"}}), UsageError);
    Registry r;
    EXPECT_THROW(Endpoint(r, "9464"), UsageError);
    EXPECT_THROW(Endpoint(r, "127.0.0.1:http"), UsageError);
    EXPECT_THROW(Endpoint(r, "127.0.0.1:70000"), UsageError);
}
