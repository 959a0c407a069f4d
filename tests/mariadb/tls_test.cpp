// mysql://...?tls=1 against a MariaDB that requires TLS (require_secure_transport) with
// certificates a throwaway CA signed: the server's CA lets a client in, every wrong setup is
// refused naming what is wrong, and a plain connection is told the server wants TLS.
#include <gtest/gtest.h>

#include <stdlib.h>

#include "certs.hpp"
#include "deadbolt/deadbolt.hpp"
#include "mariadb_server.hpp"

using deadbolt::Client;
using deadbolt::errc;
using deadbolt::test::Certs;
using deadbolt::test::MariaDbServer;

namespace {

std::string temp_dir() {
    char t[] = "/tmp/deadbolt-mariadb-tls-XXXXXX";
    return ::mkdtemp(t);
}

// One TLS server for the file's tests (each uses names of its own), and a CA that signed
// nothing of it.
struct TlsMariaDb {
    std::string dir = temp_dir(), other = temp_dir();
    Certs certs{dir}, wrong{other};
    MariaDbServer db{MariaDbServer::tls_args(dir, true)};
    ~TlsMariaDb() { deadbolt::test::run_command({"rm", "-rf", dir, other}); }
    std::string url(const std::string& query) const { return db.url("?" + query); }
};

TlsMariaDb& tls() {
    static TlsMariaDb t;
    return t;
}

// The error a connect fails with: its code and message.
std::pair<std::error_code, std::string> connect_error(const std::string& url) {
    try {
        (void)Client::connect(url);
    } catch (const deadbolt::Error& e) {
        return {e.code(), e.what()};
    }
    return {};
}

bool says(const std::string& text, const std::string& words) {
    return text.find(words) != std::string::npos;
}

TEST(MyTls, TheServersCaLetsAClientInAndItLocks) {
    auto& t = tls();
    // The server refuses plain connections: a client that got in spoke TLS.
    auto c = Client::connect(t.url("ca=" + t.certs.ca()));
    auto held = c.acquire("tls:job");
    EXPECT_GT(held.fence(), 0u);
    EXPECT_THROW(c.acquire("tls:job", {}, {.deadline = std::chrono::steady_clock::now()}),
                 deadbolt::LockError);
    held.release();
    // verify=0 checks nothing (tests only), so no CA is needed.
    EXPECT_GT(Client::connect(t.url("tls=1&verify=0")).acquire("tls:unverified").fence(), 0u);
}

TEST(MyTls, ACertificateNotSignedByTheGivenCaIsRefusedNamingTheProblem) {
    auto& t = tls();
    auto wrong = connect_error(t.url("ca=" + t.wrong.ca()));
    EXPECT_EQ(wrong.first, errc::connect_failed) << wrong.second;
    EXPECT_TRUE(says(wrong.second, "over TLS")) << wrong.second;
    EXPECT_TRUE(says(wrong.second, "not signed by the CA in ca=" + t.wrong.ca())) << wrong.second;
    // Without ca=, the system's CAs, which never signed the test's CA.
    auto system = connect_error(t.url("tls=1"));
    EXPECT_EQ(system.first, errc::connect_failed) << system.second;
    EXPECT_TRUE(says(system.second, "not signed by a CA this system trusts")) << system.second;
    auto missing = connect_error(t.url("ca=/nonexistent/ca.crt"));
    EXPECT_EQ(missing.first, errc::connect_failed) << missing.second;
    EXPECT_TRUE(says(missing.second, "cannot read ca=/nonexistent/ca.crt")) << missing.second;
}

TEST(MyTls, APlainConnectionToAServerThatRequiresTlsIsToldSo) {
    auto& t = tls();
    auto plain = connect_error(t.db.url());
    EXPECT_EQ(plain.first, errc::connect_failed) << plain.second;
    EXPECT_TRUE(says(plain.second, "require_secure_transport")) << plain.second;
    EXPECT_TRUE(says(plain.second, "add tls=1")) << plain.second;
    // A wrong password stays a wrong password, TLS or not.
    auto wrong = connect_error("mysql://deadbolt:nope@127.0.0.1:" + std::to_string(t.db.port()) +
                               "/deadbolt");
    EXPECT_EQ(wrong.first, errc::auth_failed) << wrong.second;
    EXPECT_TRUE(says(wrong.second, "Access denied")) << wrong.second;
}

TEST(MyTls, AUserWhoMustShowACertificateGetsInWithCertAndKey) {
    auto& t = tls();
    ASSERT_EQ(t.db.sql("CREATE USER 'x509'@'%' IDENTIFIED BY 'pw' REQUIRE X509; GRANT ALL ON "
                       "deadbolt.* TO 'x509'@'%'"),
              0);
    auto base =
        "mysql://x509:pw@127.0.0.1:" + std::to_string(t.db.port()) + "/deadbolt?ca=" + t.certs.ca();
    auto c = Client::connect(base + "&cert=" + t.dir + "/client.crt&key=" + t.dir + "/client.key");
    EXPECT_GT(c.acquire("tls:x509").fence(), 0u);
    auto without = connect_error(base);
    EXPECT_EQ(without.first, errc::auth_failed) << without.second;
}

TEST(MyTls, TlsOptionsThatContradictEachOtherAreUsageErrors) {
    auto& t = tls();
    auto usage = [&](const std::string& query) {
        try {
            (void)Client::connect(t.url(query));
        } catch (const deadbolt::UsageError& e) {
            return std::string(e.what());
        }
        return std::string("connected");
    };
    EXPECT_TRUE(says(usage("tls=0&ca=" + t.certs.ca()), "tls=0 and also ca"));
    EXPECT_TRUE(says(usage("verify=0"), "verify without TLS: add tls=1"));
    EXPECT_TRUE(says(usage("tls=1&cert=" + t.dir + "/client.crt"), "both cert= and key="));
    EXPECT_TRUE(says(usage("tls=yes"), "option tls must be 0 or 1"));
}

}  // namespace
