// deadbolt.names, the names list reads (a key cannot be turned back into its name), stays
// bounded: names nothing holds, waits for or keeps a permit of, unused for 10 minutes, are
// pruned, and a name pruned and taken again still gets a higher fence. Ten minutes are made
// to pass by ageing the rows, as an operator could.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "deadbolt/deadbolt.hpp"
#include "pg_server.hpp"

using namespace std::chrono_literals;
using deadbolt::Client;
using deadbolt::test::PgServer;

namespace {

std::string ask(const PgServer& pg, const std::string& sql) {
    std::string out;
    pg.psql(sql, &out);
    return out;
}

TEST(PgNames, AThousandNamesUsedOnceLeaveABoundedTableAndFencesKeepRising) {
    PgServer pg;  // of its own: the test counts every row
    auto c = Client::connect(pg.url());
    std::uint64_t last = 0;
    for (int i = 0; i < 999; ++i) last = c.acquire("pruned:" + std::to_string(i)).fence();
    auto held = c.acquire("pruned:held", {.ttl = 60s});
    auto sem = c.permit_semaphore("pruned:permit", 2, {.ttl = 60s});
    auto permit = sem.acquire();
    ASSERT_EQ(ask(pg, "SELECT count(*) FROM deadbolt.names"), "1001\n");
    // Ten minutes later: nobody has used the names since.
    ASSERT_EQ(pg.psql("UPDATE deadbolt.names SET seen = seen - interval '1 hour'"), 0);
    auto other = Client::connect(pg.url());
    last = std::max(last, other.acquire("pruner").fence());  // its first release prunes
    EXPECT_EQ(ask(pg, "SELECT convert_from(name, 'UTF8') FROM deadbolt.names ORDER BY 1"),
              "pruned:held\npruned:permit\npruner\n")
        << "only what is held, a live permit, and a name just used are left";
    // A name pruned and taken again: its fence still rises, and list finds it again.
    auto again = other.acquire("pruned:7");
    EXPECT_GT(again.fence(), last);
    auto listed = other.list("pruned:*");
    auto has = [&](const std::string& n) {
        return std::ranges::any_of(listed, [&](const auto& l) { return l.name == n; });
    };
    EXPECT_TRUE(has("pruned:7"));
    EXPECT_TRUE(has("pruned:held"));
    EXPECT_TRUE(has("pruned:permit"));
}

TEST(PgNames, AClientsOwnRecordOfANameIsTrustedOnlyWhileNoPruneCanTakeIt) {
    PgServer pg;
    auto c = Client::connect(pg.url());
    c.acquire("trusted:x").release();
    // Within its minute of trust the client does not write the name again ...
    ASSERT_EQ(pg.psql("UPDATE deadbolt.names SET seen = now() - interval '5 minutes'"), 0);
    c.acquire("trusted:x").release();
    EXPECT_EQ(ask(pg, "SELECT seen < now() - interval '4 minutes' FROM deadbolt.names"), "t\n");
    // ... and the prune, ten minutes out, cannot have taken it meanwhile.
    EXPECT_EQ(ask(pg, "SELECT deadbolt.prune_names()"), "0\n");
    EXPECT_EQ(ask(pg, "SELECT count(*) FROM deadbolt.names"), "1\n");
}

}  // namespace
