// Issue 33: a real Prometheus scrapes an application's deadbolt::metrics endpoint and a
// `deadbolt exporter` on Redis, etcd and PostgreSQL; PromQL over what it scraped counts the
// locks the test's application and processes hold, and the acquisitions the application made.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <string>
#include <vector>

#include "backends.hpp"
#include "deadbolt/deadbolt.hpp"
#include "deadbolt/metrics.hpp"
#include "eventually.hpp"
#include "prometheus_server.hpp"
#include "scrape.hpp"

namespace deadbolt::test {
namespace {

using namespace std::chrono_literals;

using Engines = ::testing::Types<conformance::OneServer
#ifdef DEADBOLT_TEST_ETCD
                                 ,
                                 conformance::Etcd
#endif
#ifdef DEADBOLT_TEST_PG
                                 ,
                                 conformance::Pg
#endif
                                 >;

template <class E>
std::string engine_label() {
    if constexpr (std::is_same_v<E, conformance::OneServer>) return "redis";
#ifdef DEADBOLT_TEST_ETCD
    if constexpr (std::is_same_v<E, conformance::Etcd>) return "etcd";
#endif
#ifdef DEADBOLT_TEST_PG
    if constexpr (std::is_same_v<E, conformance::Pg>) return "postgres";
#endif
    return "";
}

template <class E>
class PrometheusScrape : public ::testing::Test {
  protected:
    E& engine = conformance::shared<E>();
};
TYPED_TEST_SUITE(PrometheusScrape, Engines, conformance::BackendName);

TYPED_TEST(PrometheusScrape, CountsTheLocksHeldAndTheAcquisitionsMade) {
    const std::string url = this->engine.url();
    const std::string prefix = std::string("prom-") + TypeParam::kName + ":";
    metrics::Registry registry;
    ClientOptions options;
    options.observer = registry.observer(engine_label<TypeParam>());
    auto app = Client::connect(url, options);
    metrics::Endpoint app_endpoint(registry, "127.0.0.1:0");
    // The application: three locks held, two taken and released, one refused.
    std::vector<Lease> held;
    for (const char* n : {"a", "b", "c"}) held.push_back(app.acquire(prefix + n));
    for (int i = 0; i < 2; ++i) app.acquire(prefix + "cycle").release();
    EXPECT_FALSE(app.mutex(prefix + "a").try_lock());
    // Two processes hold a lock each, until the test ends them (or its end does).
    struct Processes {
        std::vector<pid_t> pids;
        void end() {
            for (pid_t& p : pids)
                if (p > 0) {
                    ::kill(p, SIGTERM);
                    ::waitpid(p, nullptr, 0);
                    p = 0;
                }
        }
        ~Processes() { end(); }
    } processes;
    for (const char* n : {"p1", "p2"})
        processes.pids.push_back(spawn_logged(
            {DEADBOLT_CLI, "run", "--url", url, "--ttl", "30s", prefix + n, "--", "sleep", "600"},
            ::testing::TempDir() + "/prometheus-run.log"));
    ExporterProcess exporter(url, {"--pattern", prefix + "*", "--min-interval", "0s"},
                             ::testing::TempDir() + "/prometheus-exporter.log");
    PrometheusServer prometheus({{"app", app_endpoint.port()}, {"exporter", exporter.port()}});
    ASSERT_TRUE(prometheus.ready()) << prometheus.log();
    auto value = [&](const std::string& q) { return prometheus.query(q).value_or(-1); };
    const std::string held_now = R"(sum(deadbolt_locks{job="exporter",kind="mutex"}))";
    EXPECT_TRUE(eventually([&] { return value(held_now) == 5; }, 60s))
        << value(held_now) << "\n"
        << exporter.scrape() << prometheus.log();
    // Each target is scraped on a schedule of its own: the application's may come a little later.
    const std::string granted =
        R"(sum(deadbolt_acquire_seconds_count{job="app",outcome="granted"}))";
    EXPECT_TRUE(eventually([&] { return value(granted) == 5; }, 60s))
        << value(granted) << " up " << value(R"(up{job="app"})") << "\n"
        << registry.text();
    EXPECT_EQ(value(R"(sum(deadbolt_acquire_seconds_count{job="app",outcome="refused"}))"), 1)
        << registry.text();
    EXPECT_EQ(value(R"(sum(deadbolt_held_seconds_count{job="app"}))"), 2);
    EXPECT_EQ(value(R"(sum(deadbolt_holding{job="app"}))"), 3);
    EXPECT_EQ(value(R"(deadbolt_exporter_up{job="exporter"})"), 1);
    // The processes end (SIGTERM: `deadbolt run` stops its command and releases): the exporter's
    // count falls to the application's three.
    processes.end();
    EXPECT_TRUE(eventually([&] { return value(held_now) == 3; }, 60s)) << value(held_now);
}

}  // namespace
}  // namespace deadbolt::test
