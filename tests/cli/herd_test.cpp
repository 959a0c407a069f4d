// Issue 30 item 4: a herd of `deadbolt run` waiters behind one holder drains with a few scripts
// per waiter: a release wakes the first in line, not every waiter. Counted from INFO
// commandstats (bench/faults.py row H measures 200, and the other engines).
#include <future>
#include <vector>

#include "cli.hpp"
#include "deadbolt/deadbolt.hpp"
#include "eventually.hpp"
#include "redis_server.hpp"

namespace deadbolt::clitest {
namespace {

using namespace std::chrono_literals;

TEST(CliHerd, RunWaitersBehindOneHolderCostFourScriptsEach) {
    test::RedisServer srv;
    auto raw = srv.raw();
    constexpr int kN = 20;
    auto holder = Client::connect(srv.url());
    auto held = holder.acquire("herd", {.ttl = 120s});
    const auto scripts = [&] { return raw.calls("evalsha") + raw.calls("eval"); };
    const auto before = scripts();
    std::vector<std::future<Result>> runs;
    for (int i = 0; i < kN; ++i)
        runs.push_back(deadbolt_async(
            srv.url(), {"run", "--ttl", "120s", "--wait", "100s", "herd", "--", "true"}));
    ASSERT_TRUE(test::eventually(
        [&] {
            return raw.cmd({"ZCARD", "{herd}:waiters"}).integer == kN;
        },
        60s))
        << raw.cmd({"ZCARD", "{herd}:waiters"}).integer << " of " << kN << " in line";
    held.release();
    for (auto& r : runs) {
        auto done = r.get();
        EXPECT_EQ(done.rc, 0) << done.out;
    }
    // Each run: its first attempt, one more once it listens (in line), the attempt its wake-up
    // brings, its release; and the holder's release (once more as EVAL: new to the server);
    // and 2 for a next in line that stood by a second and looked (a machine too loaded to hand
    // over in that time). Woken all at every release, 20 runs cost 190 attempts more.
    EXPECT_LE(scripts() - before, 4 * kN + 4);
    EXPECT_EQ(raw.cmd({"EXISTS", "{herd}:waiters"}).integer, 0);
}

}  // namespace
}  // namespace deadbolt::clitest
