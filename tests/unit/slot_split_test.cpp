// A MultiLock's lease operation over several cluster slots, split per slot and put back.
#include <gtest/gtest.h>

#include "backends/redis/keys.hpp"
#include "backends/redis/scripts.hpp"
#include "backends/redis/topology/slot_split.hpp"
#include "reply_builders.hpp"

using deadbolt::detail::key_slot;
using deadbolt::detail::merge_parts;
using deadbolt::detail::multi_kind;
using deadbolt::detail::Reply;
using deadbolt::detail::ScriptCall;
using deadbolt::detail::split_by_slot;
using deadbolt::test::integer;
using deadbolt::test::str;

namespace {

Reply error(std::string s) {
    Reply r;
    r.type = Reply::Type::error;
    r.str = std::move(s);
    return r;
}

}  // namespace

TEST(SlotSplit, AMultiLockReleaseRunsOncePerSlotWithEachKeysChannel) {
    // a and c share a slot (one hash tag); b is elsewhere.
    ASSERT_NE(key_slot("{x}a"), key_slot("b"));
    ScriptCall release{multi_kind().release,
                       {"{x}a", "b", "{x}c"},
                       {"tok", "chan", "500", "ch-a", "ch-b", "ch-c"}};
    ScriptCall other{multi_kind().check, {"one"}, {"tok", "chan", "500", "ch-one"}};
    std::vector<ScriptCall> calls{other, release};
    auto s = split_by_slot(calls);
    ASSERT_TRUE(s.split);
    ASSERT_EQ(s.calls.size(), 3u);  // the untouched call, then two parts
    EXPECT_EQ(s.origin, (std::vector<std::size_t>{0, 1, 1}));
    EXPECT_EQ(s.calls[0].keys, other.keys);
    std::vector<std::string_view> xs{"{x}a", "{x}c"}, bs{"b"};
    std::vector<std::string_view> xargs{"tok", "chan", "500", "ch-a", "ch-c"},
        bargs{"tok", "chan", "500", "ch-b"};
    bool x_first = key_slot("{x}a") < key_slot("b");
    const auto& px = s.calls[x_first ? 1 : 2];
    const auto& pb = s.calls[x_first ? 2 : 1];
    EXPECT_EQ(px.keys, xs);
    EXPECT_EQ(px.args, xargs);
    EXPECT_EQ(pb.keys, bs);
    EXPECT_EQ(pb.args, bargs);
}

TEST(SlotSplit, OnlyPerKeyScriptsOverSeveralSlotsAreSplit) {
    ScriptCall one_slot{multi_kind().extend, {"{x}a", "{x}b"}, {"tok", "chan", "500"}};
    EXPECT_FALSE(split_by_slot({&one_slot, 1}).split);
    // A script that needs its keys together is left whole (the cluster refuses it).
    ScriptCall acquire{&deadbolt::detail::multi_acquire_script(), {"a", "b"}, {"tok", "1", "2"}};
    EXPECT_FALSE(split_by_slot({&acquire, 1}).split);
    // Without per-key ARGV every part gets the common ones.
    ScriptCall extend{multi_kind().extend, {"a", "b"}, {"tok", "chan", "500"}};
    auto s = split_by_slot({&extend, 1});
    ASSERT_EQ(s.calls.size(), 2u);
    for (const auto& p : s.calls) EXPECT_EQ(p.args.size(), 3u);
}

TEST(SlotSplit, PartsMergeAsAllOrNothing) {
    deadbolt::detail::SlotSplit s;
    s.split = true;
    s.origin = {0, 0, 1, 1, 2, 2, 3};
    auto out = merge_parts(s,
                           {integer(3), integer(2),  // released, waking 2 + 1 waiters
                            integer(1), integer(0),  // one key not ours: the whole is 0
                            error("ERR down"), integer(1), integer(1)},
                           4);
    ASSERT_EQ(out.size(), 4u);
    EXPECT_EQ(out[0].integer, 4);
    EXPECT_EQ(out[1].integer, 0);
    EXPECT_TRUE(out[2].is_error());
    EXPECT_EQ(out[3].integer, 1);
    auto odd = merge_parts(s, {integer(1), str("x"), integer(1)}, 2);
    EXPECT_TRUE(odd[0].is_error());
}
