// Issue 30 item 11: fenced-get tells a missing key (exit 1, null in --json) from an empty one
// (exit 0), on every engine that keeps fenced data; the others refuse it with the reason.
#include "cli.hpp"

namespace deadbolt::clitest {
namespace {

template <class E>
using FencedGet = EveryEngine<E>;

TYPED_TEST_SUITE(FencedGet, Engines, BackendName);

TYPED_TEST(FencedGet, AMissingKeyExits1AndAnEmptyOneExits0) {
    auto missing = own_name("missing"), empty = own_name("empty");
    if (!TypeParam::kFencedData) {
        auto r = this->cli({"fenced-get", missing});
        EXPECT_EQ(r.rc, 64) << r.out;
        EXPECT_TRUE(says(r, {"fenced data is not offered on"}));
        return;
    }
    auto r = this->cli({"fenced-get", missing});
    EXPECT_EQ(r.rc, 1) << r.out;
    EXPECT_EQ(r.out, "DEADBOLT_VERSION=0\nDEADBOLT_VALUE=''\n");
    auto j = this->cli({"fenced-get", "--json", missing});
    EXPECT_EQ(j.rc, 1) << j.out;
    EXPECT_TRUE(says(j, {"\"value\":null"}));

    ASSERT_EQ(this->cli({"fenced-set", "--fence", "5", empty, ""}).rc, 0);
    auto e = this->cli({"fenced-get", empty});
    EXPECT_EQ(e.rc, 0) << e.out;
    EXPECT_EQ(e.out, "DEADBOLT_VERSION=1\nDEADBOLT_VALUE=''\n");
    auto ej = this->cli({"fenced-get", "--json", empty});
    EXPECT_EQ(ej.rc, 0) << ej.out;
    EXPECT_TRUE(says(ej, {"\"value\":\"\""}));
    EXPECT_TRUE(says(this->cli({"fenced-get", "--help"}), {"exits 1"}));
}

}  // namespace
}  // namespace deadbolt::clitest
