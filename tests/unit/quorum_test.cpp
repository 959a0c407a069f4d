// Redlock's arithmetic: majorities, the two-round fence, node timeouts, node-set checks.
#include <gtest/gtest.h>

#include "core/quorum.hpp"
#include "deadbolt/error.hpp"

using namespace std::chrono_literals;
using namespace deadbolt::detail;

TEST(Quorum, AnyTwoMajoritiesShareANode) {
    for (int n = 1; n <= 9; ++n) {
        EXPECT_GT(2 * majority(n), n) << n;        // two majorities overlap
        EXPECT_LE(2 * (majority(n) - 1), n) << n;  // one node fewer would not
    }
    EXPECT_EQ(majority(3), 2);
    EXPECT_EQ(majority(5), 3);
    EXPECT_EQ(majority(4), 3);
}

TEST(Quorum, RoundTwoFenceIsAboveEveryCounterAndTheTimeFloor) {
    EXPECT_EQ(redlock_fence({5, 9, 7}, 3), 10U);
    EXPECT_EQ(redlock_fence({5, 9, 7}, 100), 101U);  // counters lost: the clock still orders
    EXPECT_EQ(redlock_fence({}, 0), 1U);
}

TEST(Quorum, RoundOneAgreesOnlyWhenAMajorityHoldsTheHighestCounter) {
    EXPECT_EQ(agreed_in_round1({70, 70, 70}, 2), 70U);
    EXPECT_EQ(agreed_in_round1({70, 70}, 2), 70U);  // the third node refused or is late
    // One node was ahead of the proposal: the others' 70 is below its 71, so a later majority
    // sharing only that node could get a fence below 70 + 1 from it: round 2 must raise.
    EXPECT_EQ(agreed_in_round1({70, 71}, 2), std::nullopt);
    EXPECT_EQ(agreed_in_round1({70, 71, 71}, 2), 71U);
    EXPECT_EQ(agreed_in_round1({70, 70, 71}, 2), std::nullopt);  // the highest must be agreed
    EXPECT_EQ(agreed_in_round1({}, 2), std::nullopt);
}

TEST(Quorum, NodeTimeoutIsFarBelowTheTtl) {
    EXPECT_EQ(node_timeout(30s, 5s), 3s);
    EXPECT_EQ(node_timeout(30s, 1s), 1s);   // never more than the command timeout
    EXPECT_EQ(node_timeout(5ms, 1s), 1ms);  // never zero
}

TEST(Quorum, NodeSetsThatWeakenRedlockAreRefused) {
    using deadbolt::errc;
    auto bad = [](const NodeSetCheck& c) { return c.status.ec; };
    EXPECT_EQ(bad(check_node_set({"10.0.0.1:6379", "10.0.0.2:6379"}, false)),
              deadbolt::make_error_code(errc::invalid_argument));
    EXPECT_TRUE(check_node_set({"10.0.0.1:6379", "10.0.0.2:6379"}, true).status.ok());
    auto twice = check_node_set({"10.0.0.1:6379", "10.0.0.2:6379", "10.0.0.1:6379"}, false);
    EXPECT_EQ(bad(twice), deadbolt::make_error_code(errc::invalid_argument));
    EXPECT_NE(twice.status.detail.find("listed twice"), std::string::npos);
    auto three = check_node_set({"a:1", "b:1", "c:1"}, false);
    EXPECT_TRUE(three.status.ok());
    EXPECT_TRUE(three.warning.empty());
    auto four = check_node_set({"a:1", "b:1", "c:1", "d:1"}, false);
    EXPECT_TRUE(four.status.ok());
    EXPECT_NE(four.warning.find("odd"), std::string::npos);
}

TEST(Quorum, AVerdictNeedsAMajorityEitherWay) {
    EXPECT_EQ(tally(3, 0, 5), Tally::yes);
    EXPECT_EQ(tally(2, 2, 5), Tally::undecided);  // one node silent decides it
    EXPECT_EQ(tally(2, 3, 5), Tally::no);         // three noes: a majority cannot say yes
    EXPECT_EQ(tally(0, 2, 5), Tally::undecided);  // three silent could still all say yes
    EXPECT_EQ(tally(0, 3, 5), Tally::no);
    EXPECT_EQ(tally(1, 1, 3), Tally::undecided);
    EXPECT_EQ(tally(1, 0, 1), Tally::yes);
    EXPECT_EQ(tally(0, 1, 1), Tally::no);
}

TEST(Quorum, AFailedAttemptWaitsUntilEnoughOfTheHoldersKeysExpire) {
    using ms = std::chrono::milliseconds;
    // 5 nodes, 3 refused (TTLs 300, 100, 200), 2 free: one more must free up: the shortest.
    EXPECT_EQ(redlock_wait({ms(300), ms(100), ms(200)}, 2, 5), ms(100));
    // 5 refused, none free: three must expire: the third shortest.
    EXPECT_EQ(redlock_wait({ms(50), ms(40), ms(30), ms(20), ms(10)}, 0, 5), ms(30));
    // A majority free already (a split vote or a timing failure): no wait from TTLs.
    EXPECT_EQ(redlock_wait({ms(500)}, 4, 5), ms(0));
    // Keys without expiry count last; if one is needed, there is no end to the wait.
    EXPECT_EQ(redlock_wait({ms(-1), ms(100), ms(200)}, 1, 5), ms(200));
    EXPECT_EQ(redlock_wait({ms(-1), ms(-1), ms(100)}, 0, 3), ms(-1));
    // Nodes that did not answer are not free: more refusals must expire than exist.
    EXPECT_EQ(redlock_wait({ms(100), ms(200)}, 0, 5), ms(200));
}

TEST(Quorum, ReadsTheRoleFromInfoReplication) {
    auto master = parse_role("# Replication\r\nrole:master\r\nconnected_slaves:0\r\n");
    EXPECT_TRUE(master.master);
    auto replica = parse_role(
        "# Replication\r\nrole:slave\r\nmaster_host:10.0.0.7\r\nmaster_port:6380\r\n"
        "master_link_status:up\r\n");
    EXPECT_FALSE(replica.master);
    EXPECT_EQ(replica.master_host, "10.0.0.7");
    EXPECT_EQ(replica.master_port, "6380");
    // A field name that only starts like another must not match it.
    EXPECT_FALSE(parse_role("role_extra:master\r\n").master);
    EXPECT_FALSE(parse_role("").master);
}

TEST(Quorum, ALockIsHeldWhileAMajorityOfNodesHoldIt) {
    auto held = [](long long ttl, std::uint64_t fence) {
        deadbolt::LockStatus s;
        s.held = true;
        s.kind = "mutex";
        s.ttl = std::chrono::milliseconds(ttl);
        s.last_fence = fence;
        return s;
    };
    deadbolt::LockStatus free_node;
    free_node.kind = "free";
    free_node.last_fence = 99;
    // 3 of 5 hold: held until only 2 do, at the third longest TTL (300) of {500, 400, 300}.
    auto s = majority_status({held(500, 7), held(300, 7), held(400, 7), free_node}, 5);
    EXPECT_TRUE(s.held);
    EXPECT_EQ(s.kind, "mutex");
    EXPECT_EQ(s.ttl, 300ms);
    EXPECT_EQ(s.last_fence, 7u);  // the highest a majority reached: 99 is one node's alone
    free_node.last_fence = 6;
    s = majority_status({held(500, 7), free_node, free_node}, 3);
    EXPECT_EQ(s.last_fence, 6u);
    // 2 of 5 hold (a split, or a partial key): not held.
    s = majority_status({held(500, 7), held(300, 7), free_node, free_node, free_node}, 5);
    EXPECT_FALSE(s.held);
    EXPECT_EQ(s.kind, "free");
    // A key with no expiry counts as the longest.
    s = majority_status({held(-1, 1), held(200, 1)}, 3);
    EXPECT_EQ(s.ttl, 200ms);
    // The holder is the one the node with the latest grant (highest fence) names.
    auto a = held(500, 7), b = held(400, 8), c = held(300, 6);
    a.held_by = {{"web-1", 11, std::nullopt, 500ms}};
    b.held_by = {{"web-2", 22, std::nullopt, 400ms}};
    c.held_by = {{"web-3", 33, std::nullopt, 300ms}};
    s = majority_status({a, b, c}, 3);
    ASSERT_EQ(s.held_by.size(), 1u);
    EXPECT_EQ(s.held_by.front().host, "web-2");
}

TEST(Quorum, AnElectionsLeaderIsTheOneAMajorityAgreesOn) {
    auto leads = [](std::uint64_t term, std::string value, long long ttl) {
        deadbolt::Leader l;
        l.elected = true;
        l.term = term;
        l.value = std::move(value);
        l.ttl = std::chrono::milliseconds(ttl);
        return l;
    };
    deadbolt::Leader nobody;
    // 3 of 5 carry term 9: it leads, until only 2 of them do (the third longest TTL).
    auto l = majority_leader(
        {leads(9, "a", 900), leads(9, "a", 700), leads(9, "a", 800), leads(4, "b", 50), nobody}, 5);
    EXPECT_TRUE(l.elected);
    EXPECT_EQ(l.term, 9u);
    EXPECT_EQ(l.value, "a");
    EXPECT_EQ(l.ttl, 700ms);
    // A proclamation that reached only some nodes: the value most of them have.
    l = majority_leader({leads(9, "old", 900), leads(9, "new", 900), leads(9, "new", 900)}, 3);
    EXPECT_EQ(l.value, "new");
    // A campaign between its rounds (local terms differ) or a split: nobody leads yet.
    EXPECT_FALSE(majority_leader({leads(5, "a", 900), leads(6, "a", 900), nobody}, 3).elected);
    EXPECT_FALSE(majority_leader({leads(9, "a", 900), leads(9, "a", 900)}, 5).elected);
    EXPECT_FALSE(majority_leader({}, 3).elected);
}
