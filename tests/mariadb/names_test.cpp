// deadbolt_names, the names list reads, and deadbolt_holders, what status reads, stay bounded
// on MariaDB: names nothing holds, unused for 10 minutes, are pruned, and so are the rows of
// sessions that hold nothing; a name pruned and taken again still gets a higher fence. Ten
// minutes are made to pass by ageing the rows, as an operator could.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "deadbolt/deadbolt.hpp"
#include "mariadb_server.hpp"

using namespace std::chrono_literals;
using deadbolt::Client;
using deadbolt::test::MariaDbServer;

namespace {

TEST(MyNames, AThousandNamesUsedOnceLeaveBoundedTablesAndFencesKeepRising) {
    MariaDbServer db;  // of its own: the test counts every row
    auto c = Client::connect(db.url());
    std::uint64_t last = 0;
    for (int i = 0; i < 999; ++i) last = c.acquire("pruned:" + std::to_string(i)).fence();
    auto held = c.acquire("pruned:held", {.ttl = 60s});
    ASSERT_EQ(db.ask("SELECT COUNT(*) FROM deadbolt_names"), "1000\n");
    ASSERT_EQ(db.sql("UPDATE deadbolt_names SET seen = seen - INTERVAL 1 HOUR"), 0);
    auto other = Client::connect(db.url());
    last = std::max(last, other.acquire("pruner").fence());  // its first release prunes
    EXPECT_EQ(db.ask("SELECT name FROM deadbolt_names ORDER BY name"), "pruned:held\npruner\n");
    EXPECT_EQ(db.ask("SELECT lock_name, fence FROM deadbolt_holders"),
              "pruned:held\t" + std::to_string(held.fence()) + "\n")
        << "one row per session that holds, none for those that let go";
    auto again = other.acquire("pruned:7");
    EXPECT_GT(again.fence(), last);
    auto listed = other.list("pruned:*");
    EXPECT_TRUE(std::ranges::any_of(listed, [](const auto& l) { return l.name == "pruned:7"; }));
    EXPECT_TRUE(std::ranges::any_of(listed, [](const auto& l) { return l.name == "pruned:held"; }));
}

}  // namespace
