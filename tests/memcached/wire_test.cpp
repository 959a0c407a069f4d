// The meta protocol's parser (src/backends/memcached/wire.hpp) fed what a real memcached
// answers, whole and a byte at a time, and what it must not take for memcached.
#include <gtest/gtest.h>

#include "backends/memcached/keys.hpp"
#include "backends/memcached/wire.hpp"
#include "memcached_server.hpp"

using deadbolt::detail::base64;
using deadbolt::detail::classic_store;
using deadbolt::detail::meta_request;
using deadbolt::detail::MetaParser;
using deadbolt::detail::MetaReply;
using deadbolt::detail::ttl_seconds;
using deadbolt::detail::unbase64;
using deadbolt::test::McServer;

namespace {

McServer& server() {
    static McServer s;
    return s;
}

std::vector<MetaReply> parse(const std::string& bytes, bool bytewise) {
    MetaParser p;
    std::vector<MetaReply> out;
    auto drain = [&] {
        for (MetaReply r;;) {
            auto res = p.next(r);
            if (res == MetaParser::Result::garbage) ADD_FAILURE() << "garbage: " << r.value;
            if (res != MetaParser::Result::reply) return;
            out.push_back(r);
        }
    };
    if (bytewise) {
        for (char c : bytes) {
            p.feed(std::string_view(&c, 1));
            drain();
        }
    } else {
        p.feed(bytes);
        drain();
    }
    return out;
}

TEST(McWire, TheServersRepliesToEveryCommandDeadboltSendsParseAsTheProtocolSays) {
    const std::string k = "wire:one", v("tok\r\nen", 7);
    std::string req = classic_store(k, 30, v) + meta_request("mg", k, "v c t") +
                      classic_store(k, 30, "other") + meta_request("ma", "wire:ctr", "N0 J41 v") +
                      meta_request("ma", "wire:ctr", "v") + meta_request("md", k, "C999999") +
                      classic_store(k, 30, "x", 999999) + classic_store("wire:none", 30, "x", 5) +
                      "mn\r\n";
    const std::string bytes = server().raw(req);
    for (bool bytewise : {false, true}) {
        auto rs = parse(bytes, bytewise);
        ASSERT_EQ(rs.size(), 9u) << bytes;
        EXPECT_EQ(rs[0].code, "STORED");
        EXPECT_EQ(rs[1].code, "VA");
        EXPECT_EQ(rs[1].value, v) << "a value holding CRLF";
        ASSERT_TRUE(rs[1].number('c'));
        EXPECT_GT(*rs[1].number('c'), 0);
        EXPECT_EQ(rs[1].number('t'), 30);
        EXPECT_EQ(rs[2].code, "NOT_STORED");  // the add found it taken
        EXPECT_EQ(rs[3].value, "41");         // created at J
        EXPECT_EQ(rs[4].value, "42");
        EXPECT_EQ(rs[5].code, "EX");      // a compare-and-delete with another's CAS deletes nothing
        EXPECT_EQ(rs[6].code, "EXISTS");  // nor does a compare-and-set
        EXPECT_EQ(rs[7].code, "NOT_FOUND");  // a compare-and-set of nothing
        EXPECT_EQ(rs[8].code, "MN");
    }
    auto after = parse(server().raw(meta_request("mg", k, "v") + meta_request("md", k, "") +
                                    meta_request("md", k, "") + meta_request("mg", k, "v")),
                       false);
    ASSERT_EQ(after.size(), 4u);
    EXPECT_EQ(after[0].value, v) << "the refused writes left the lock as it was";
    EXPECT_EQ(after[1].code, "HD");
    EXPECT_EQ(after[2].code, "NF");
    EXPECT_EQ(after[3].code, "EN");
}

TEST(McWire, NamesBecomeKeysBothProtocolsTakeAndErrorLinesAreReplies) {
    using deadbolt::detail::mc_keys;
    using deadbolt::detail::mc_name_of;
    EXPECT_EQ(mc_keys("app:", "orders:42").lock(), "app:orders:42") << "other tools see it";
    const std::string binary("a\0b \xff", 5);
    for (const std::string& name :
         {binary, std::string("~x"), std::string(300, 'n'), std::string("orders:42")}) {
        auto k = mc_keys("app:", name);
        EXPECT_LE(k.fence().size(), 250u);
        EXPECT_LE(k.slot(99999).size(), 250u);
        for (unsigned char c : k.slot(7)) EXPECT_TRUE(c > 0x20 && c < 0x7f) << k.slot(7);
        EXPECT_EQ(mc_name_of("app:", k.fence()), std::nullopt);
        EXPECT_EQ(mc_name_of("app:", k.slot(3)), std::nullopt);
        if (name.size() < 300) {
            EXPECT_EQ(mc_name_of("app:", k.lock()), name);
        }
    }
    EXPECT_EQ(mc_name_of("app:", "other:x"), std::nullopt);
    auto k = mc_keys("", binary).lock();
    auto rs = parse(
        server().raw(classic_store(k, 9, "v") + meta_request("mg", k, "k v") + "mg bad Zbogus\r\n"),
        false);
    ASSERT_EQ(rs.size(), 3u);
    EXPECT_EQ(rs[0].code, "STORED");
    EXPECT_EQ(rs[1].value, "v");
    EXPECT_EQ(rs[1].flag('k'), k);
    EXPECT_TRUE(rs[2].error()) << rs[2].code;
}

TEST(McWire, WhatIsNotTheMetaProtocolIsGarbageNotAReply) {
    for (const std::string& junk :
         std::vector<std::string>{"+PONG\r\n", "-ERR unknown command\r\n", "HTTP/1.1 200 OK\r\n",
                                  "VA x\r\n", "VA 3\r\nabcdef\r\n", std::string(9000, 'z')}) {
        MetaParser p;
        p.feed(junk);
        MetaReply r;
        EXPECT_EQ(p.next(r), MetaParser::Result::garbage) << junk.substr(0, 20);
    }
    MetaParser p;
    p.feed("VA 5 t3\r\nab");
    MetaReply r;
    EXPECT_EQ(p.next(r), MetaParser::Result::need_more);
}

TEST(McWire, NumbersInRepliesAreWholeDecimalsOrNone) {
    using deadbolt::detail::decimal;
    EXPECT_EQ(decimal("0"), 0);
    EXPECT_EQ(decimal("-1"), -1) << "an item without a TTL says t-1";
    EXPECT_EQ(decimal("123456789012345678"), 123456789012345678);
    EXPECT_EQ(decimal("9223372036854775807"), INT64_MAX);
    EXPECT_EQ(decimal("-9223372036854775808"), INT64_MIN);
    for (std::string_view bad :
         {"", "-", "+1", "--1", "--123456789012345678", "--9223372036854775808", "12a", "1 2", " 1",
          "9223372036854775808", "-9223372036854775809", "9999999999999999999",
          "99999999999999999999"})
        EXPECT_EQ(decimal(bad), std::nullopt) << bad;
    MetaParser p;
    p.feed("HD c12 t-1 kx\r\nVA 2 c7\r\nab\r\nSERVER_ERROR out of memory\r\nVA 1x\r\n");
    MetaReply r;
    ASSERT_EQ(p.next(r), MetaParser::Result::reply);
    EXPECT_EQ(r.number('c'), 12);
    EXPECT_EQ(r.number('t'), -1);
    EXPECT_EQ(r.number('k'), std::nullopt) << "a token that is not a number";
    EXPECT_EQ(r.number('q'), std::nullopt) << "a flag the reply does not carry";
    EXPECT_FALSE(r.error());
    ASSERT_EQ(p.next(r), MetaParser::Result::reply);
    EXPECT_EQ(r.code, "VA");
    EXPECT_EQ(r.value, "ab");
    EXPECT_EQ(r.number('c'), 7);
    ASSERT_EQ(p.next(r), MetaParser::Result::reply);
    EXPECT_TRUE(r.error());
    EXPECT_EQ(r.code, "SERVER_ERROR");
    EXPECT_EQ(r.value, "out of memory");
    EXPECT_EQ(p.next(r), MetaParser::Result::garbage) << "a data size that is not a number";
    EXPECT_EQ(r.code, "");
}

TEST(McWire, RequestsAreWrittenAfterWhatTheBufferHolds) {
    using deadbolt::detail::append_classic_store;
    using deadbolt::detail::append_flag;
    using deadbolt::detail::append_meta;
    std::string out = "x";
    append_meta(out, "md", "k", 'C', 18446744073709551615ULL);
    append_meta(out, "mg", "k", "");
    append_meta(out, "mg", "k", "v c t");
    append_classic_store(out, "k", -1, std::string("a\0b", 3), 0);
    append_classic_store(out, "k", 30, "v", 42);
    append_flag(out, 'J', 7);
    EXPECT_EQ(out, std::string("xmd k C18446744073709551615\r\nmg k\r\nmg k v c t\r\n"
                               "add k 0 -1 3\r\na\0b\r\ncas k 0 30 1 42\r\nv\r\nJ7",
                               88));
}

TEST(McWire, Base64RoundTripsAndTtlsRoundUpWithTwoSecondsToSpare) {
    for (const std::string& s :
         std::vector<std::string>{"", "f", "fo", "foo", "foob", std::string("\0\xff\x80", 3)})
        EXPECT_EQ(unbase64(base64(s)), s);
    EXPECT_EQ(base64("foob"), "Zm9vYg==");
    EXPECT_FALSE(unbase64("Zm9v!g=="));
    EXPECT_EQ(ttl_seconds(2000), 4);
    EXPECT_EQ(ttl_seconds(2001), 5);
    EXPECT_EQ(ttl_seconds(30000), 32);
}

}  // namespace
