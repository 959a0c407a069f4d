// Issue 30 item 3: a holding's TTL bounds how long its holder's crash keeps the lock. A holding
// of TTL T lives on a session whose timeout is T, as the ensemble sees it; a TTL under the
// ensemble's shortest session is refused naming it, a longer one than its longest gets the
// longest; the session of a TTL nothing uses any more is closed.
#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "deadbolt/deadbolt.hpp"
#include "eventually.hpp"
#include "zk_ensemble.hpp"
#include "znodes.hpp"

using namespace std::chrono_literals;
using deadbolt::Client;
using deadbolt::test::children;
using deadbolt::test::eventually;
using deadbolt::test::node_of;
using deadbolt::test::ZkEnsemble;
using Clock = std::chrono::steady_clock;

namespace {

// The session timeout the ensemble keeps for the session that owns node, as the server it is
// connected to lists it (four-letter word "cons": "sid=0x...,...,to=<ms>,..."); -1 when none
// lists it.
long session_timeout_of(const ZkEnsemble& zk, const std::string& node) {
    std::string out;
    zk.kazoo(R"(
import sys
from kazoo.client import KazooClient
zk = KazooClient(hosts=sys.argv[1]); zk.start()
print("%x" % zk.exists(sys.argv[2]).ephemeralOwner, flush=True)
zk.stop()
)",
             {node}, &out);
    auto sid = "sid=0x" + out.substr(0, out.find('\n'));
    for (int i = 0; i < 3; ++i) {
        auto cons = zk.ask(i, "cons");
        auto at = cons.find(sid + ",");
        if (at == std::string::npos) continue;
        auto to = cons.find(",to=", at);
        if (to == std::string::npos) continue;
        return std::stol(cons.substr(to + 4));
    }
    return -1;
}

// Connections a server has open now (mntr's zk_num_alive_connections).
long alive_connections(const ZkEnsemble& zk) {
    auto text = zk.ask(0, "mntr");
    auto at = text.find("zk_num_alive_connections");
    return at == std::string::npos ? -1 : std::stol(text.substr(text.find('\t', at) + 1));
}

}  // namespace

TEST(ZkSessions, AHoldingLivesOnASessionWhoseTimeoutIsItsTtl) {
    auto& zk = ZkEnsemble::shared();  // sessions of 1 s to 10 s (2 to 20 ticks of 500 ms)
    auto c = Client::connect(zk.url());
    auto two = c.acquire("ttl-two", {.ttl = 2s});
    auto three = c.acquire("ttl-three", {.ttl = 3s});
    EXPECT_EQ(session_timeout_of(zk, node_of(zk, "/ttl-two")), 2000);
    EXPECT_EQ(session_timeout_of(zk, node_of(zk, "/ttl-three")), 3000);
    // Longer than the ensemble grants: the longest it grants, and validity no longer.
    auto longer = c.acquire("ttl-longer", {.ttl = 60s});
    EXPECT_EQ(session_timeout_of(zk, node_of(zk, "/ttl-longer")), 10000);
    EXPECT_LE(longer.valid_until() - Clock::now(), 10s);
    // Holdings of one TTL share its session.
    auto again = c.acquire("ttl-two-again", {.ttl = 2s});
    EXPECT_EQ(session_timeout_of(zk, node_of(zk, "/ttl-two-again")), 2000);
}

TEST(ZkSessions, ATtlUnderTheEnsemblesShortestSessionIsRefusedNamingIt) {
    auto& zk = ZkEnsemble::shared();
    auto c = Client::connect(zk.url());
    for (int round = 0; round < 2; ++round) {  // learned from the ensemble, then known
        try {
            (void)c.acquire("ttl-short", {.ttl = 500ms});
            ADD_FAILURE() << "a 500 ms TTL is under the ensemble's 1 s sessions";
        } catch (const deadbolt::UsageError& e) {
            EXPECT_NE(std::string(e.what()).find("shortest session"), std::string::npos)
                << e.what();
            EXPECT_NE(std::string(e.what()).find("at least 1.0s"), std::string::npos) << e.what();
        }
    }
    EXPECT_TRUE(children(zk, "/ttl-short").empty()) << "a refused TTL left a node";
    EXPECT_TRUE(c.acquire("ttl-short", {.ttl = 1s}).valid());
    // A URL's session_timeout under the shortest is refused at connect.
    EXPECT_THROW(Client::connect(zk.url("?session_timeout=500ms")), deadbolt::UsageError);
}

TEST(ZkSessions, TheSessionOfATtlNothingUsesAnyMoreIsClosed) {
    ZkEnsemble zk(1);  // its connections are this test's alone
    auto c = Client::connect(zk.url());
    auto first = alive_connections(zk);  // the client's first session (and mntr's own)
    for (auto ttl : {1500ms, 2000ms, 2500ms, 3000ms})
        c.acquire("ttl-" + std::to_string(ttl.count()), {.ttl = ttl}).release();
    EXPECT_TRUE(eventually([&] { return alive_connections(zk) == first + 4; }, 10s))
        << alive_connections(zk) - first << " sessions besides the first; one per TTL expected";
    // Unused for longer than a session is kept idle, they go at the next acquisition.
    std::this_thread::sleep_for(2500ms);
    auto held = c.acquire("ttl-1000", {.ttl = 1s});
    EXPECT_TRUE(eventually([&] { return alive_connections(zk) == first + 1; }, 10s))
        << alive_connections(zk) - first
        << " sessions besides the first; only the held 1 s one expected";
}
