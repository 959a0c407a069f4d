// Issue 33 item 2: `deadbolt exporter` serves every lock on the engine, whoever holds it, on
// every engine: a `deadbolt run` holder is counted while it holds and gone once it released.
#include <cstdio>
#include <fstream>
#include <string>

#include <unistd.h>

#include "cli.hpp"
#include "eventually.hpp"
#include "scrape.hpp"

namespace deadbolt::clitest {
namespace {

using namespace std::chrono_literals;

template <class E>
class CliExporter : public EveryEngine<E> {};
TYPED_TEST_SUITE(CliExporter, Engines, BackendName);

TYPED_TEST(CliExporter, CountsARunsLockWhileItHoldsIt) {
    auto name = own_name("exported");
    test::ExporterProcess exporter(this->url(), {"--pattern", name + "*", "--min-interval", "0s"},
                                   ::testing::TempDir() + "/exporter-" + TypeParam::kName + ".log");
    auto mutexes = [&] {
        return test::sample_where(exporter.scrape(), "deadbolt_locks", "kind=\"mutex\"");
    };
    ASSERT_TRUE(test::eventually([&] { return mutexes() == 0; }, 30s)) << exporter.scrape();
    // The run holds until the test lets it go (a file appears).
    const std::string go = ::testing::TempDir() + "/exporter-go-" + TypeParam::kName + "-" +
                           std::to_string(::getpid());
    std::remove(go.c_str());
    auto run = deadbolt_async(this->url(), {"run", "--ttl", "30s", name, "--", "sh", "-c",
                                            "while [ ! -e '" + go + "' ]; do sleep 0.1; done"});
    until_held(this->url(), name);
    EXPECT_TRUE(test::eventually([&] { return mutexes() == 1; })) << exporter.scrape();
    auto t = exporter.scrape();
    EXPECT_EQ(test::sample_where(t, "deadbolt_exporter_up", "engine="), 1) << t;
    std::ofstream{go}.put('\n');
    EXPECT_EQ(run.get().rc, 0);
    EXPECT_TRUE(test::eventually([&] { return mutexes() == 0; })) << exporter.scrape();
    EXPECT_EQ(exporter.stop(), 0) << "SIGTERM ends it cleanly";
}

TEST(CliExporterInput, AnEngineDownAtTheStartIsServedAsDownUntilItAnswers) {
    test::RedisServer srv;
    srv.stop();
    test::ExporterProcess exporter(srv.url(), {"--min-interval", "0s"},
                                   ::testing::TempDir() + "/exporter-down.log");
    auto up = [&] {
        return test::sample_where(exporter.scrape(), "deadbolt_exporter_up", "engine=");
    };
    EXPECT_TRUE(test::eventually([&] { return up() == 0; }, 30s))
        << "served, and down: " << exporter.scrape();
    srv.start();  // the same port
    EXPECT_TRUE(test::eventually([&] { return up() == 1; }, 30s)) << exporter.scrape();
    EXPECT_EQ(exporter.stop(), 0);
    auto bad = deadbolt("redis://127.0.0.1:1/0?nonsense=1", {"exporter"});
    EXPECT_EQ(bad.rc, 64) << "a URL that can never work is refused at once: " << bad.out;
}

TEST(CliExporterInput, BadAddressesAndDurationsAreNamed) {
    test::RedisServer srv;
    auto bad = deadbolt(srv.url(), {"exporter", "--listen", "nowhere"});
    EXPECT_EQ(bad.rc, 64) << bad.out;
    EXPECT_TRUE(says(bad, {"nowhere", "not HOST:PORT"}));
    auto interval = deadbolt(srv.url(), {"exporter", "--min-interval", "soon"});
    EXPECT_EQ(interval.rc, 64) << interval.out;
    EXPECT_TRUE(says(interval, {"--min-interval"}));
    test::ExporterProcess first(srv.url(), {}, ::testing::TempDir() + "/exporter-first.log");
    ASSERT_TRUE(test::eventually([&] { return !first.scrape().empty(); }, 30s));
    auto taken =
        deadbolt(srv.url(), {"exporter", "--listen", "127.0.0.1:" + std::to_string(first.port())});
    EXPECT_EQ(taken.rc, 69) << taken.out;
    EXPECT_TRUE(says(taken, {"cannot listen", std::to_string(first.port()).c_str()}));
}

}  // namespace
}  // namespace deadbolt::clitest
