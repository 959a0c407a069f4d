// What a cluster says about where keys live: CLUSTER SLOTS replies and redirections.
#include <gtest/gtest.h>

#include "backends/redis/topology/slots.hpp"
#include "reply_builders.hpp"

using deadbolt::detail::NodeAddress;
using deadbolt::detail::parse_cluster_slots;
using deadbolt::detail::parse_redirect;
using deadbolt::detail::Redirect;
using deadbolt::detail::Reply;
using deadbolt::detail::SlotRange;
using deadbolt::test::arr;
using deadbolt::test::integer;
using deadbolt::test::str;

namespace {

Reply node(std::string host, long long port) {
    return arr({str(std::move(host)), integer(port), str("0123abcd")});
}

}  // namespace

TEST(Slots, ReadsRangesMastersAndReplicas) {
    auto reply = arr({
        arr({integer(0), integer(5460), node("10.0.0.1", 7000), node("10.0.0.4", 7003)}),
        arr({integer(5461), integer(16383), node("", 7001)}),  // "" = the node asked
    });
    std::vector<SlotRange> ranges;
    std::string why;
    ASSERT_TRUE(parse_cluster_slots(reply, "10.0.0.9", ranges, &why)) << why;
    ASSERT_EQ(ranges.size(), 2u);
    EXPECT_EQ(ranges[0].first, 0);
    EXPECT_EQ(ranges[0].last, 5460);
    EXPECT_EQ(ranges[0].master, (NodeAddress{"10.0.0.1", 7000}));
    ASSERT_EQ(ranges[0].replicas.size(), 1u);
    EXPECT_EQ(ranges[0].replicas[0], (NodeAddress{"10.0.0.4", 7003}));
    EXPECT_EQ(ranges[1].master, (NodeAddress{"10.0.0.9", 7001}));
    EXPECT_TRUE(ranges[1].replicas.empty());
}

TEST(Slots, RefusesMalformedReplies) {
    std::vector<SlotRange> ranges;
    std::string why;
    EXPECT_FALSE(parse_cluster_slots(str("OK"), "h", ranges, &why));
    EXPECT_NE(why.find("other than an array"), std::string::npos) << why;
    EXPECT_FALSE(parse_cluster_slots(arr({arr({integer(0), integer(16384), node("h", 1)})}), "h",
                                     ranges, &why));
    EXPECT_NE(why.find("bad slot range"), std::string::npos) << why;
    EXPECT_FALSE(
        parse_cluster_slots(arr({arr({integer(9), integer(3), node("h", 1)})}), "h", ranges, &why));
    EXPECT_FALSE(
        parse_cluster_slots(arr({arr({integer(0), integer(3), node("h", 0)})}), "h", ranges, &why));
    EXPECT_NE(why.find("master"), std::string::npos) << why;
    EXPECT_FALSE(parse_cluster_slots(arr({arr({integer(0), integer(3)})}), "h", ranges, &why));
    EXPECT_TRUE(parse_cluster_slots(arr({}), "h", ranges, &why));  // no slots: the caller says
    EXPECT_TRUE(ranges.empty());
}

TEST(Slots, ReadsMovedAndAsk) {
    auto m = parse_redirect("MOVED 3999 127.0.0.1:6381");
    EXPECT_EQ(m.kind, Redirect::Kind::moved);
    EXPECT_EQ(m.slot, 3999);
    EXPECT_EQ(m.to, (NodeAddress{"127.0.0.1", 6381}));
    auto a = parse_redirect("ASK 16383 [::1]:7000");
    EXPECT_EQ(a.kind, Redirect::Kind::ask);
    EXPECT_EQ(a.slot, 16383);
    EXPECT_EQ(a.to, (NodeAddress{"::1", 7000}));
    auto bare = parse_redirect("MOVED 1 ::1:7000");  // IPv6 unbracketed: the port is last
    EXPECT_EQ(bare.to, (NodeAddress{"::1", 7000}));
    auto unknown_host = parse_redirect("MOVED 12 :7002");  // the server does not know its address
    EXPECT_EQ(unknown_host.kind, Redirect::Kind::moved);
    EXPECT_EQ(unknown_host.to, (NodeAddress{"", 7002}));
    for (auto bad : {"MOVED", "MOVED 16384 h:1", "MOVED x h:1", "ASK 1 h", "ASK 1 h:0",
                     "ASK 1 h:65536", "ERR MOVED 1 h:1", "TRYAGAIN Multiple keys"})
        EXPECT_EQ(parse_redirect(bad).kind, Redirect::Kind::none) << bad;
}

TEST(Slots, RetriesOnlyStatesThatRanNothing) {
    EXPECT_TRUE(
        deadbolt::detail::is_cluster_retry("TRYAGAIN Multiple keys request during rehashing"));
    EXPECT_TRUE(deadbolt::detail::is_cluster_retry("CLUSTERDOWN The cluster is down"));
    EXPECT_FALSE(deadbolt::detail::is_cluster_retry("MOVED 1 h:1"));
    EXPECT_FALSE(deadbolt::detail::is_cluster_retry("ERR CLUSTERDOWN"));
}
