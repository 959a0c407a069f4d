#include <gtest/gtest.h>

#include <hiredis/hiredis.h>

#include <random>

#include "backends/redis/net/resp.hpp"
#include "backends/redis/scripts.hpp"

using namespace deadbolt::detail;

TEST(Resp, EncodesBinarySafely) {
    std::string out;
    encode_command(out, {"SET", std::string_view("a\0b", 3), ""});
    EXPECT_EQ(out, std::string("*3\r\n$3\r\nSET\r\n$3\r\na\0b\r\n$0\r\n\r\n", 28));
}

TEST(Resp, ReadsAllTypesAcrossSplitFeeds) {
    RespReader r;
    std::string wire =
        "+OK\r\n-ERR bad\r\n:42\r\n$-1\r\n$5\r\nhe\r\no\r\n*2\r\n:1\r\n$3\r\nabc\r\n*-1\r\n";
    for (char ch : wire) r.feed(&ch, 1);  // one byte at a time
    auto a = r.next();
    ASSERT_TRUE(a);
    EXPECT_EQ(a->type, Reply::Type::status);
    EXPECT_EQ(a->str, "OK");
    auto b = r.next();
    EXPECT_TRUE(b->is_error());
    EXPECT_EQ(b->str, "ERR bad");
    EXPECT_EQ(r.next()->integer, 42);
    EXPECT_TRUE(r.next()->is_nil());
    EXPECT_EQ(r.next()->str, "he\r\no");  // CRLF inside a bulk string
    auto arr = r.next();
    ASSERT_EQ(arr->type, Reply::Type::array);
    ASSERT_EQ(arr->elements.size(), 2u);
    EXPECT_EQ(arr->elements[1].str, "abc");
    EXPECT_TRUE(r.next()->is_nil());  // null array
    EXPECT_FALSE(r.next());
}

TEST(Resp, IncompleteReplyWaitsForMore) {
    RespReader r;
    r.feed("$10\r\nhello", 10);
    EXPECT_FALSE(r.next());
    r.feed("world\r\n", 7);
    EXPECT_EQ(r.next()->str, "helloworld");
}

TEST(Resp, GarbageIsAnError) {
    RespReader r;
    r.feed("HTTP/1.1 400\r\n", 14);
    EXPECT_THROW(r.next(), std::runtime_error);
    r.reset();
    r.feed(":7\r\n", 4);
    EXPECT_EQ(r.next()->integer, 7);
}

TEST(Resp, BadIntegerIsAnError) {
    RespReader r;
    r.feed(":abc\r\n", 6);
    EXPECT_THROW(r.next(), std::runtime_error);
}

TEST(Resp, EncoderMatchesHiredisByteForByte) {
    std::mt19937 rng(42);
    for (int round = 0; round < 500; ++round) {
        std::vector<std::string> args(1 + rng() % 12);
        for (auto& a : args) {
            a.resize(rng() % (round % 50 == 0 ? 70000 : 40));
            for (auto& ch : a) ch = static_cast<char>(rng());
        }
        std::vector<std::string_view> views(args.begin(), args.end());
        std::string ours;
        encode_command(ours, views);
        std::vector<const char*> p;
        std::vector<size_t> l;
        for (auto& a : args) p.push_back(a.data()), l.push_back(a.size());
        char* theirs = nullptr;
        int n = redisFormatCommandArgv(&theirs, int(args.size()), p.data(), l.data());
        ASSERT_EQ(ours, std::string(theirs, size_t(n))) << "round " << round;
        redisFreeCommand(theirs);
    }
}

TEST(Resp, TheEvalOfAnEvalshaRequestIsWhatEncodeEvalMakes) {
    const Script& s = acquire_script();
    const std::vector<std::string_view> keys{"k", std::string_view("\0b", 2), ""};
    const std::vector<std::string_view> args{"token", "30000", "EVALSHA"};
    std::string evalsha;
    encode_evalsha(evalsha, s, keys, args);
    std::string eval;
    encode_eval(eval, s, keys, args);
    EXPECT_EQ(eval_of_evalsha(evalsha, s), eval);
    // Another script's request, a plain command or a cut one is refused, not misread.
    EXPECT_EQ(eval_of_evalsha(evalsha, release_script()), "");
    std::string set;
    encode_command(set, {"SET", "k", "v"});
    EXPECT_EQ(eval_of_evalsha(set, s), "");
    EXPECT_EQ(eval_of_evalsha(evalsha.substr(0, 20), s), "");
}
