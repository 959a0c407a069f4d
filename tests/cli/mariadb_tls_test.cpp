// Issue 30 item 13: MariaDB over TLS, as a user of the CLI sees it: a server that requires
// TLS, started with a CA the test makes, is reached with ?ca=; a wrong CA and a plain URL are
// refused (exit 69) with words that say what is wrong.
#include <stdlib.h>

#include "certs.hpp"
#include "cli.hpp"

namespace deadbolt::clitest {
namespace {

#ifdef DEADBOLT_TEST_MY
std::string temp_dir() {
    char t[] = "/tmp/deadbolt-cli-tls-XXXXXX";
    return ::mkdtemp(t);
}

// A server of the test's own (the suite's shared one speaks no TLS); named My so that it runs
// with the MariaDB engine's CLI tests.
template <class E>
class MariaDbTls : public ::testing::Test {
  protected:
    std::string dir = temp_dir(), other = temp_dir();
    test::Certs certs{dir}, wrong{other};
    test::MariaDbServer db{test::MariaDbServer::tls_args(dir, true)};
    ~MariaDbTls() override { test::run_command({"rm", "-rf", dir, other}); }
};

TYPED_TEST_SUITE(MariaDbTls, ::testing::Types<My>, BackendName);

TYPED_TEST(MariaDbTls, TheServersCaGetsInAndWrongSetupsExit69SayingWhy) {
    auto name = own_name("job");
    auto ok = deadbolt(this->db.url("?ca=" + this->certs.ca()), {"run", name, "--", "true"});
    EXPECT_EQ(ok.rc, 0) << ok.out;

    auto wrong_ca = deadbolt(this->db.url("?ca=" + this->wrong.ca()), {"run", name, "--", "true"});
    EXPECT_EQ(wrong_ca.rc, 69);
    EXPECT_TRUE(says(wrong_ca, {"over TLS", "certificate", "not signed by the CA in ca="}));

    auto plain = deadbolt(this->db.url(), {"run", name, "--", "true"});
    EXPECT_EQ(plain.rc, 69);
    EXPECT_TRUE(says(plain, {"refuses connections without TLS", "add tls=1"}));
}
#endif

}  // namespace
}  // namespace deadbolt::clitest
