// Issue 30 item 10: a refusal without waiting names who holds the lock (the leader, for an
// election), on every engine, as status would.
#include <unistd.h>

#include "cli.hpp"
#include "deadbolt/deadbolt.hpp"

namespace deadbolt::clitest {
namespace {

using namespace std::chrono_literals;

template <class E>
using Refusal = EveryEngine<E>;

TYPED_TEST_SUITE(Refusal, Engines, BackendName);

TYPED_TEST(Refusal, NoWaitNamesTheHolder) {
    auto name = own_name("held");
    auto c = Client::connect(this->url());
    auto lease = c.acquire(name);
    auto r = this->cli({"run", "--no-wait", name, "--", "true"});
    EXPECT_EQ(r.rc, 75);
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    EXPECT_TRUE(says(r, {"is held by", host, ("pid " + std::to_string(getpid())).c_str()}));
}

TYPED_TEST(Refusal, NoWaitOnAnElectionNamesTheLeader) {
    auto name = own_name("elected");
    if (!TypeParam::kElects) {
        auto r = this->cli({"elect", "--no-wait", name, "--", "true"});
        EXPECT_EQ(r.rc, 64) << r.out;
        EXPECT_TRUE(says(r, {"LeaderElection"}));
        return;
    }
    auto c = Client::connect(this->url());
    Lease term = c.campaign(name, "10.0.0.7:8080");
    auto r = this->cli({"elect", "--no-wait", name, "--", "true"});
    EXPECT_EQ(r.rc, 75);
    EXPECT_TRUE(says(r, {"the leader '10.0.0.7:8080'", "term"}));
}

}  // namespace
}  // namespace deadbolt::clitest
