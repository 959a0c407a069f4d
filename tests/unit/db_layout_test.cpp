// How deadbolt names locks to the databases and reads their URLs: pure, no server.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backends/mariadb/dialect.hpp"
#include "backends/mariadb/names.hpp"
#include "backends/mariadb/url.hpp"
#include "backends/postgres/dialect.hpp"
#include "backends/postgres/keys.hpp"
#include "backends/postgres/url.hpp"
#include "core/token.hpp"

using namespace deadbolt::detail;
using namespace std::chrono_literals;

// The expected keys are Python's: int.from_bytes(sha256(b"deadbolt:" + name)[:8], "big",
// signed=True), the README's rule computed by another implementation.
TEST(PgKeys, AKeyIsTheFirstEightBytesOfTheNamesSha256AsASignedBigint) {
    EXPECT_EQ(advisory_key("orders:42"), -8256888524835933954);
    EXPECT_EQ(advisory_key("x"), 8366237579830091847);
    EXPECT_EQ(advisory_key(""), -190124769951723721);
}

TEST(PgKeys, KeysKeptPerThreadAreTheNamesOwnWhateverCameBetween) {
    // The same three, each asked again after many names that share the thread's few places.
    std::string long_name(1000, 'x');
    auto long_key = advisory_key(long_name);
    for (int round = 0; round < 2; ++round) {
        for (int i = 0; i < 200; ++i) advisory_key("name:" + std::to_string(i));
        EXPECT_EQ(advisory_key("orders:42"), -8256888524835933954);
        EXPECT_EQ(advisory_key("x"), 8366237579830091847);
        EXPECT_EQ(advisory_key(long_name), long_key);
        long_name.back() = 'y';  // a long name differing only at its end is another key
        EXPECT_NE(advisory_key(long_name), long_key);
        long_name.back() = 'x';
    }
}

TEST(PgKeys, AMultiLocksKeysAreSortedOnceEach) {
    const std::vector<std::string> names{"x", "orders:42", "x"};
    auto keys = sorted_keys(names);
    ASSERT_EQ(keys.size(), 2u);
    EXPECT_LT(keys[0], keys[1]);
    EXPECT_EQ(bytea_value(bytea_literal(std::string("a\0\xff'", 4)).substr(1, 10)),
              std::string("a\0\xff'", 4));
}

TEST(PgDialect, ATryDrawsItsFenceOnlyWhenItTookEveryKeyAndNamesTheHoldingInItsSession) {
    PgDialect d("deadbolt", TokenOrigin{"vm", 1234});
    // The schema's functions try, draw the fence and set application_name (schema.cpp).
    EXPECT_EQ(d.try_take({"7"}, 0, false, true, 30s),
              "SELECT deadbolt.take1(7, false, true, 'vm', 1234, 30000)");
    EXPECT_EQ(d.try_take({"7"}, 0, true, false, 30s),
              "SELECT deadbolt.take1(7, true, false, 'vm', 1234, 30000)");
    EXPECT_EQ(d.try_take({"1", "2"}, 0, false, true, 30s),
              "SELECT * FROM deadbolt.take('{1,2}'::bigint[], 0, false, true, 'vm', 1234, 30000)");
    // The rest after a wait: what is left to try, or only the fence.
    EXPECT_EQ(d.try_take({"1", "2"}, 1, false, true, 30s),
              "SELECT * FROM deadbolt.take('{1,2}'::bigint[], 1, false, true, 'vm', 1234, 30000)");
    EXPECT_EQ(d.try_take({"1"}, 1, false, true, 30s),
              "SELECT deadbolt.take1(NULL, false, true, 'vm', 1234, 30000)");
}

TEST(PgDialect, StatusReadsTheHoldingBackFromItsSessionsName) {
    auto l = parse_pg_label("deadbolt vm.example:1234 57 30000");
    ASSERT_TRUE(l);
    EXPECT_EQ(l->host, "vm.example");
    EXPECT_EQ(l->pid, 1234);
    EXPECT_TRUE(l->holding);
    EXPECT_EQ(l->fence, 57u);
    EXPECT_EQ(l->ttl, 30s);
    auto taking = parse_pg_label("deadbolt vm:1 - 5000");
    ASSERT_TRUE(taking);
    EXPECT_TRUE(taking->holding);
    EXPECT_FALSE(taking->fence) << "a MultiLock taking its names has no fence yet";
    auto idle = parse_pg_label("deadbolt vm:1");
    ASSERT_TRUE(idle);
    EXPECT_FALSE(idle->holding);
    EXPECT_FALSE(parse_pg_label("psql"));
    EXPECT_FALSE(parse_pg_label("deadbolt"));
    EXPECT_FALSE(parse_pg_label("deadbolt vm:x"));
}

TEST(MyNames, PlainLowercaseNamesStayAndTheRestAreHashedTo64Characters) {
    EXPECT_EQ(get_lock_name("orders:42"), "orders:42");
    EXPECT_EQ(get_lock_name("a-b_c.d/e@f#1"), "a-b_c.d/e@f#1");
    // Python: "deadbolt:" + sha256(b"Orders:42").hexdigest()[:55]
    EXPECT_EQ(get_lock_name("Orders:42"),
              "deadbolt:1fb9dd31012503f1a01819dccf3933776b0bc2e6db96a3ae4a66b7a");
    for (const std::string& n : {std::string(65, 'a'), std::string("deadbolt:x"),
                                 std::string("it's"), std::string("a\0b", 3), std::string()})
        EXPECT_EQ(get_lock_name(n).size(), 64u) << n;
    EXPECT_NE(get_lock_name("ORDERS"), get_lock_name("Orders"));
    // Rows are keyed by the SHA-256 of the bytes, computed by the server.
    EXPECT_EQ(hash_expression(std::string("a\0'", 3)), "UNHEX(SHA2(X'610027', 256))");
}

TEST(MyDialect, TtlsAreWholeSecondsRoundedUp) {
    EXPECT_EQ(whole_seconds(1000ms), 1);
    EXPECT_EQ(whole_seconds(1001ms), 2);
    EXPECT_EQ(whole_seconds(1ms), 1);
    // The try, the fence and the session's row for status: one statement on MariaDB 10.5+ (a
    // refusal answers no row) ...
    MyDialect now(TokenOrigin{"vm", 1234}, true);
    EXPECT_EQ(now.try_take({"'a'"}, 0, false, true, 30s),
              "REPLACE INTO deadbolt_holders SELECT CONNECTION_ID(), 'a', "
              "NEXTVAL(deadbolt_fences), 30000, ROUND(UNIX_TIMESTAMP(NOW(6)) * 1000), 1234, 'vm' "
              "FROM DUAL WHERE COALESCE(GET_LOCK('a', 0), 0) = 1 RETURNING fence");
    // ... and one round trip before.
    MyDialect d(TokenOrigin{"vm", 1234}, false);
    EXPECT_EQ(d.try_take({"'a'"}, 0, false, true, 30s),
              "SET @deadbolt_f = IF(COALESCE(GET_LOCK('a', 0), 0) = 1, NEXTVAL(deadbolt_fences), "
              "NULL); REPLACE INTO deadbolt_holders SELECT CONNECTION_ID(), 'a', @deadbolt_f, "
              "30000, ROUND(UNIX_TIMESTAMP(NOW(6)) * 1000), 1234, 'vm' FROM DUAL WHERE "
              "@deadbolt_f IS NOT NULL; SELECT @deadbolt_f");
    // Several: nested IFs stop at the first refused, counted into a variable; a session that
    // took some of them is marked too.
    auto two = d.try_take({"'a'", "'b'"}, 0, false, true, 30s);
    EXPECT_NE(two.find("IF(COALESCE(GET_LOCK('a', 0), 0) = 1, IF(COALESCE(GET_LOCK('b', 0), 0) = "
                       "1, 2, 1), 0)"),
              std::string::npos)
        << two;
    EXPECT_NE(two.find("WHERE @deadbolt_n > 0; SELECT @deadbolt_f, @deadbolt_n"), std::string::npos)
        << two;
}

TEST(DbUrl, PostgresUrlsSayWhatTheyNameAndRefuseWhatIsWrong) {
    auto u = parse_pg_url(
        "postgresql://app:p%40ss@db1:5433,db2/orders?schema=locks&sslmode=require", {});
    ASSERT_TRUE(u.ok) << u.error;
    EXPECT_EQ(u.servers.size(), 2u);
    EXPECT_EQ(u.servers[1].port, 5432);
    EXPECT_EQ(u.options.password, "p@ss");
    EXPECT_EQ(u.database, "orders");
    EXPECT_EQ(u.schema, "locks");
    auto kw = u.keywords();
    EXPECT_NE(
        std::find(kw.begin(), kw.end(), std::pair<std::string, std::string>{"host", "db1,db2"}),
        kw.end());
    EXPECT_TRUE(parse_pg_url("postgres://app@db/x", {}).ok) << "a user without a password";
    deadbolt::ClientOptions apart;  // the password from DEADBOLT_PASSWORD or a file
    apart.password = "from-env";
    auto lone = parse_pg_url("postgres://app@db/x", apart);
    EXPECT_EQ(lone.options.username, "app");
    EXPECT_EQ(lone.options.password, "from-env") << "a lone user keeps the password given apart";
    auto my = parse_my_url("mysql://app@db/x", apart);
    ASSERT_TRUE(my.ok) << my.error;
    EXPECT_EQ(my.options.username, "app");
    EXPECT_EQ(my.options.password, "from-env");
    EXPECT_FALSE(parse_pg_url("postgresql://db/x?schema=Bad", {}).ok);
    EXPECT_FALSE(parse_pg_url("postgresql://db/x?nope=1", {}).ok);
    EXPECT_FALSE(parse_pg_url("pg://db/x", {}).ok);
}

TEST(DbUrl, MariaDbUrlsNeedOneServerAndADatabase) {
    auto u = parse_my_url("mariadb://app:pw@db:3307/locks?command_timeout=2s", {});
    ASSERT_TRUE(u.ok) << u.error;
    EXPECT_EQ(u.server.port, 3307);
    EXPECT_EQ(u.database, "locks");
    EXPECT_EQ(u.options.command_timeout, 2s);
    EXPECT_EQ(
        parse_my_url("mysql://app:pw@db", {}).error.find("names no database") != std::string::npos,
        true);
    EXPECT_FALSE(parse_my_url("mysql://app:pw@a,b/x", {}).ok);
    EXPECT_FALSE(parse_my_url("mysql://app:pw@db/x`y", {}).ok);
}

TEST(DbUrl, MariaDbTlsIsAskedWithTlsOrAFileAndVerifiesUnlessTold) {
    auto plain = parse_my_url("mysql://app:pw@db/x", {});
    EXPECT_FALSE(plain.options.tls.enabled);
    auto ca = parse_my_url("mysql://app:pw@db/x?ca=/etc/ca.pem", {});
    ASSERT_TRUE(ca.ok) << ca.error;
    EXPECT_TRUE(ca.options.tls.enabled) << "a CA asks for TLS";
    EXPECT_TRUE(ca.options.tls.verify);
    EXPECT_EQ(ca.options.tls.ca_file, "/etc/ca.pem");
    auto bare = parse_my_url("mysql://app:pw@db/x?tls=1&verify=0", {});
    ASSERT_TRUE(bare.ok) << bare.error;
    EXPECT_TRUE(bare.options.tls.enabled);
    EXPECT_FALSE(bare.options.tls.verify);
    EXPECT_NE(parse_my_url("mysql://db/x?tls=0&ca=/c", {}).error.find("tls=0"), std::string::npos);
    EXPECT_NE(parse_my_url("mysql://db/x?verify=0", {}).error.find("add tls=1"), std::string::npos);
    EXPECT_NE(parse_my_url("mysql://db/x?cert=/c", {}).error.find("both cert= and key="),
              std::string::npos);
    EXPECT_NE(parse_my_url("mysql://db/x?sslmode=x", {}).error.find("tls, ca, cert, key, verify"),
              std::string::npos);
}
