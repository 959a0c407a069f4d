// etcds:// against members that speak TLS only and require client certificates: the lock
// works with the right files, and every wrong one is a clear error that writes nothing.
#include <gtest/gtest.h>

#include <stdlib.h>

#include "certs.hpp"
#include "deadbolt/deadbolt.hpp"
#include "etcd_cluster.hpp"

using deadbolt::Client;
using deadbolt::errc;
using deadbolt::test::Certs;
using deadbolt::test::EtcdCluster;

namespace {

struct TlsEtcd {
    std::string dir = [] {
        char t[] = "/tmp/deadbolt-etcd-tls-XXXXXX";
        return std::string(::mkdtemp(t));
    }();
    Certs certs{dir};
    EtcdCluster etcd{1, {dir + "/server.crt", dir + "/server.key", dir + "/ca.crt"}};
    ~TlsEtcd() { deadbolt::test::run_command({"rm", "-rf", dir}); }
    std::string url(const std::string& scheme, const std::string& query) const {
        return scheme + "://localhost:" + std::to_string(etcd.client_port(0)) +
               "?connect_timeout=2s" + (query.empty() ? "" : "&" + query);
    }
    std::string client() const {
        return "ca=" + certs.ca() + "&cert=" + dir + "/client.crt&key=" + dir + "/client.key";
    }
};

// The error a connect fails with: its code and message.
std::pair<std::error_code, std::string> connect_error(const std::string& url) {
    try {
        (void)Client::connect(url);
    } catch (const deadbolt::Error& e) {
        return {e.code(), e.what()};
    }
    return {};
}

}  // namespace

TEST(EtcdTls, AClientWithItsCertificateLocksAndEveryWrongSetupIsNamed) {
    TlsEtcd t;
    auto c = Client::connect(t.url("etcds", t.client()));
    auto held = c.acquire("tls-job");
    EXPECT_GT(held.fence(), 0u);
    held.release();

    auto plain = connect_error(t.url("etcd", ""));
    EXPECT_EQ(plain.first, errc::connect_failed) << plain.second;
    EXPECT_NE(plain.second.find("etcds://"), std::string::npos) << plain.second;
    auto no_cert = connect_error(t.url("etcds", "ca=" + t.certs.ca()));
    EXPECT_TRUE(no_cert.first) << "the members require a client certificate";
    EXPECT_NE(no_cert.second.find("TLS"), std::string::npos) << no_cert.second;
    auto missing = connect_error(t.url("etcds", "ca=/nonexistent/ca.crt"));
    EXPECT_EQ(missing.first, errc::tls_failed) << missing.second;
    EXPECT_NE(missing.second.find("/nonexistent/ca.crt"), std::string::npos) << missing.second;
    std::string out;
    t.etcd.etcdctl({"get", "--prefix", "--keys-only", "tls-job/"}, &out);
    EXPECT_EQ(out, "") << "nothing is left behind";
}
