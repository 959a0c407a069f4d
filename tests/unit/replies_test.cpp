#include <gtest/gtest.h>

#include "backends/redis/replies.hpp"
#include "backends/redis/scripts.hpp"
#include "reply_builders.hpp"

using namespace deadbolt::detail;

using deadbolt::test::arr;
using deadbolt::test::integer;
using deadbolt::test::str;

TEST(Replies, AcquireOutcomes) {
    AttemptOutcome o;
    ASSERT_TRUE(parse_acquire(arr({integer(1), str("1763790000123456")}), o).ok());
    EXPECT_TRUE(o.acquired);
    EXPECT_EQ(o.fence, 1763790000123456u);
    ASSERT_TRUE(parse_acquire(arr({integer(0), integer(2500)}), o).ok());
    EXPECT_FALSE(o.acquired);
    EXPECT_EQ(o.pttl.count(), 2500);
    ASSERT_TRUE(parse_acquire(arr({integer(0), integer(-1)}), o).ok());
    EXPECT_EQ(o.pttl.count(), -1);
    ASSERT_TRUE(parse_acquire(arr({integer(0), integer(-2)}), o).ok());
    EXPECT_EQ(o.pttl.count(), 0);
    // A refusal that lined up says where: the waiter keeps that place in every later attempt.
    AttemptOutcome lined;
    ASSERT_TRUE(
        parse_acquire(arr({integer(0), integer(2500), str("1763790000123456")}), lined).ok());
    EXPECT_FALSE(lined.acquired);
    EXPECT_EQ(lined.pttl.count(), 2500);
    EXPECT_EQ(lined.ticket, "1763790000123456");
    EXPECT_TRUE(o.ticket.empty());
}

TEST(Replies, MalformedAcquireIsProtocolError) {
    AttemptOutcome o;
    EXPECT_EQ(parse_acquire(integer(1), o).ec, deadbolt::errc::protocol_error);
    EXPECT_EQ(parse_acquire(arr({integer(1), str("x")}), o).ec, deadbolt::errc::protocol_error);
    EXPECT_EQ(parse_acquire(arr({integer(1), str("0")}), o).ec, deadbolt::errc::protocol_error);
    EXPECT_EQ(parse_acquire(arr({integer(0), str("5")}), o).ec, deadbolt::errc::protocol_error);
    EXPECT_EQ(parse_acquire(arr({integer(0), integer(5), integer(7)}), o).ec,
              deadbolt::errc::protocol_error);
    EXPECT_EQ(parse_acquire(arr({integer(0), integer(5), str("1"), str("2")}), o).ec,
              deadbolt::errc::protocol_error);
}

TEST(Replies, Fenced) {
    bool ok = false;
    std::uint64_t hi = 0, version = 0;
    ASSERT_TRUE(parse_fenced(arr({integer(0), str("99"), integer(4)}), ok, hi, version).ok());
    EXPECT_FALSE(ok);
    EXPECT_EQ(hi, 99u);
    EXPECT_EQ(version, 4u);
    EXPECT_FALSE(parse_fenced(arr({integer(0), str("99")}), ok, hi, version).ok());
    EXPECT_FALSE(parse_fenced(arr({integer(0)}), ok, hi, version).ok());
}

TEST(Replies, ServerErrorsMapToTheirOwnCodes) {
    EXPECT_EQ(from_server_error("WRONGPASS invalid username-password pair").ec,
              deadbolt::errc::auth_failed);
    EXPECT_EQ(from_server_error("NOAUTH Authentication required.").ec, deadbolt::errc::auth_failed);
    EXPECT_EQ(from_server_error("NOPERM this user has no permissions").ec,
              deadbolt::errc::permission_denied);
    EXPECT_EQ(from_server_error("ERR Error running script: WRONGTYPE Operation").ec,
              deadbolt::errc::wrong_type);
    EXPECT_EQ(from_server_error("READONLY You can't write against a read only replica.").ec,
              deadbolt::errc::readonly);
    EXPECT_EQ(from_server_error("OOM command not allowed").ec, deadbolt::errc::out_of_memory);
    EXPECT_EQ(from_server_error("LOADING Redis is loading").ec, deadbolt::errc::loading);
    EXPECT_EQ(from_server_error("BUSY Redis is busy running a script").ec, deadbolt::errc::busy);
    EXPECT_EQ(from_server_error("ERR something else").ec, deadbolt::errc::server_error);
    // What Redis 6 answers to a script with a shebang: the message names the version needed.
    EXPECT_NE(from_server_error("ERR Error compiling script (new function): user_script:1: "
                                "unexpected symbol near '#'")
                  .detail.find("Redis 7.0 or later"),
              std::string::npos);
    EXPECT_TRUE(deadbolt::is_retryable(from_server_error("LOADING x").ec));
    EXPECT_FALSE(deadbolt::is_retryable(from_server_error("WRONGTYPE x").ec));
}

TEST(Scripts, Sha1MatchesRedis) {
    // SCRIPT LOAD "return 1" answers e0e1f9fabfc9d4800c877a703b823ac0578ff8db.
    EXPECT_EQ(sha1_hex("return 1"), "e0e1f9fabfc9d4800c877a703b823ac0578ff8db");
}
