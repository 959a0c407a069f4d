// Issue 30 item 12: with a user in the URL, deadbolt's lock nodes are that user's. Anyone may
// read them (status, list), but an anonymous client or another digest user can neither delete a
// holder's node (and so take its lock) nor queue; a client of the same user can free it.
// acl=open keeps the nodes open to anyone, as before.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <system_error>
#include <vector>

#include "code_of.hpp"
#include "deadbolt/deadbolt.hpp"
#include "eventually.hpp"
#include "zk_ensemble.hpp"
#include "znodes.hpp"

using namespace std::chrono_literals;
using deadbolt::Client;
using deadbolt::test::children;
using deadbolt::test::code_of;
using deadbolt::test::eventually;
using deadbolt::test::node_of;
using deadbolt::test::ZkEnsemble;
using Clock = std::chrono::steady_clock;

namespace {

// Deletes argv[2] as Kazoo, anonymous or (argv[3]) as digest user:password: prints "deleted"
// or "refused" (the ACL said no).
constexpr const char* kKazooDeletes = R"(
import sys
from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError
auth = [("digest", sys.argv[3])] if len(sys.argv) > 3 else []
zk = KazooClient(hosts=sys.argv[1], auth_data=auth); zk.start()
try:
    zk.delete(sys.argv[2]); print("deleted", flush=True)
except NoAuthError:
    print("refused", flush=True)
zk.stop()
)";

std::string kazoo_deletes(const ZkEnsemble& zk, const std::string& path,
                          const std::string& user = "") {
    std::string out;
    std::vector<std::string> args{path};
    if (!user.empty()) args.push_back(user);
    zk.kazoo(kKazooDeletes, args, &out);
    return out;
}

}  // namespace

TEST(ZkAcl, OnlyTheHoldersUserMayDeleteItsNodeOrQueueAndAnyoneMayLook) {
    auto& zk = ZkEnsemble::shared();
    const std::string team = "?user=acl-team&password=s3cret";
    auto owner = Client::connect(zk.url(team));
    auto held = owner.acquire("acl-held");
    auto node = node_of(zk, "/acl-held");
    EXPECT_EQ(kazoo_deletes(zk, node), "refused\n") << "an anonymous client deleted the node";
    EXPECT_EQ(kazoo_deletes(zk, node, "intruder:pw"), "refused\n")
        << "another digest user deleted the node";
    EXPECT_TRUE(held.is_current());
    EXPECT_FALSE(held.lost());

    auto anonymous = Client::connect(zk.url());
    EXPECT_TRUE(anonymous.status("acl-held").held) << "anyone may read who holds";
    EXPECT_EQ(
        code_of([&] { (void)anonymous.acquire("acl-held", {}, {.deadline = Clock::now() + 2s}); }),
        make_error_code(deadbolt::errc::permission_denied))
        << "an anonymous client may not even queue";
    EXPECT_EQ(code_of([&] { (void)anonymous.force_unlock("acl-held"); }),
              make_error_code(deadbolt::errc::permission_denied));
    EXPECT_TRUE(held.is_current());

    auto colleague = Client::connect(zk.url(team));
    EXPECT_EQ(colleague.force_unlock("acl-held"), "mutex") << "the same user may free it";
    EXPECT_TRUE(eventually([&] { return held.lost(); }, 10s)) << "and its holder is told";
    EXPECT_TRUE(children(zk, "/acl-held").empty());
}

TEST(ZkAcl, AclOpenKeepsTheNodesOpenToAnyone) {
    auto& zk = ZkEnsemble::shared();
    auto owner = Client::connect(zk.url("?user=acl-open&password=pw&acl=open"));
    auto held = owner.acquire("acl-open");
    EXPECT_EQ(kazoo_deletes(zk, node_of(zk, "/acl-open")), "deleted\n");
    EXPECT_TRUE(eventually([&] { return held.lost(); }, 10s));
}
