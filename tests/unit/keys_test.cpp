#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "backends/redis/keys.hpp"

using namespace deadbolt::detail;

TEST(Keys, SlotsMatchRedisCluster) {
    // Reference values from the Redis Cluster spec / CLUSTER KEYSLOT.
    EXPECT_EQ(key_slot("123456789"), 0x31C3 % 16384);
    EXPECT_EQ(key_slot("foo"), 12182);
    EXPECT_EQ(key_slot("bar"), 5061);
    EXPECT_EQ(key_slot("{user1000}.following"), key_slot("user1000"));
    EXPECT_EQ(key_slot("foo{}{bar}"), key_slot("foo{}{bar}"));  // empty tag: whole key
    EXPECT_NE(key_slot("foo{}{bar}"), key_slot("bar"));
    EXPECT_EQ(key_slot("foo{{bar}}zap"), key_slot("{bar"));
}

TEST(Keys, AuxKeysShareTheLockSlot) {
    for (const std::string& name :
         std::vector<std::string>{"a", "orders:42", "{tenant}:job", "a b", "ü",
                                  std::string("x\0y", 3), "{}", "}{", "{a", "a}"}) {
        auto k = lock_keys("app:", name);
        EXPECT_EQ(k.lock, "app:" + name);
        EXPECT_EQ(key_slot(k.fence), key_slot(k.lock)) << name;
        EXPECT_EQ(key_slot(k.channel), key_slot(k.lock)) << name;
        EXPECT_NE(k.fence, k.lock);
    }
    EXPECT_EQ(lock_keys("", "job").fence, "{job}:fence");
    EXPECT_EQ(lock_keys("", "{t}job").fence, "{t}job:fence");
}

TEST(Keys, DistinctNamesGiveDistinctKeys) {
    std::set<std::string> locks, fences;
    for (const std::string& name :
         std::vector<std::string>{"a", "a ", "a:b", "a\nb", std::string("a\0b", 3),
                                  std::string("a\0c", 3), "{a}b", "{a}c"}) {
        auto k = lock_keys("", name);
        EXPECT_TRUE(locks.insert(k.lock).second) << name;
        EXPECT_TRUE(fences.insert(k.fence).second) << name;
    }
}

TEST(Keys, FenceRecordKey) {
    EXPECT_EQ(fence_record_key("record"), "{record}:deadbolt-fence");
    EXPECT_EQ(key_slot(fence_record_key("users:{7}:row")), key_slot("users:{7}:row"));
}

TEST(Keys, SpansSlotsWhenAnyKeyHashesElsewhere) {
    ASSERT_NE(key_slot("a"), key_slot("b"));
    EXPECT_TRUE(spans_slots(std::vector<std::string>{"a", "b"}));
    EXPECT_TRUE(spans_slots(std::vector<std::string_view>{"{x}a", "{x}b", "c"}));
    EXPECT_FALSE(spans_slots(std::vector<std::string_view>{"{x}a", "{x}b", "x"}));
    EXPECT_FALSE(spans_slots(std::vector<std::string>{}));
}

TEST(Keys, AuxKeysOfEveryShapeAreToldFromLockKeys) {
    // Every auxiliary key of every shape of main key is one; the main keys are not.
    for (std::string main : {"job", "app:{7}:job", "a}b", "{x}", "{}y"}) {
        EXPECT_FALSE(is_aux_key(main)) << main;
        for (const char* suffix : {"fence", "queue", "readers", "claim", "limit", "alive",
                                   "waiters", "deadbolt-fence", "deadbolt-version"})
            EXPECT_TRUE(is_aux_key(aux_key(main, suffix))) << aux_key(main, suffix);
    }
    // Channels are not keys; names that only end like one are locks.
    EXPECT_FALSE(is_aux_key(aux_key("job", "released")));
    EXPECT_FALSE(is_aux_key("job:fence"));
    EXPECT_FALSE(is_aux_key("{job}:fencer"));
    EXPECT_FALSE(is_aux_key(":fence"));
    EXPECT_FALSE(is_aux_key("{}:fence"));
}

TEST(Keys, GlobEscapeMatchesLiterally) {
    EXPECT_EQ(glob_escape("app:"), "app:");
    EXPECT_EQ(glob_escape("a*b?c[d]e\\f"), "a\\*b\\?c\\[d\\]e\\\\f");
}

TEST(Keys, EveryKeyOfANameInStatusOrder) {
    EXPECT_EQ(every_key_of("app:", "job"),
              (std::vector<std::string>{"app:job", "{app:job}:fence", "{app:job}:queue",
                                        "{app:job}:readers", "{app:job}:claim", "{app:job}:limit",
                                        "{app:job}:waiters"}));
}
