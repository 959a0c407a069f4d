// deadbolt-test-server ENGINE: starts one real server of ENGINE (redis, etcd, zookeeper,
// postgres, mariadb, memcached) on free ports, as the C++ tests' fixtures do, prints the URL
// that reaches it, and stops it (leaving nothing behind) when its standard input closes. The
// language bindings' tests use it to run against every engine with the fixtures' setup.
#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>
#include <string>

#include "redis_server.hpp"
#ifdef DEADBOLT_SERVE_ETCD
#include "etcd_cluster.hpp"
#endif
#ifdef DEADBOLT_SERVE_ZK
#include "zk_ensemble.hpp"
#endif
#ifdef DEADBOLT_SERVE_PG
#include "pg_server.hpp"
#endif
#ifdef DEADBOLT_SERVE_MY
#include "mariadb_server.hpp"
#endif
#ifdef DEADBOLT_SERVE_MC
#include "memcached_server.hpp"
#endif

namespace {

using deadbolt::test::RedisServer;

// The server (kept alive by the pointer) and its URL.
template <class Server, class... Args>
std::shared_ptr<void> start(std::string& url, Args&&... args) {
    auto s = std::make_shared<Server>(std::forward<Args>(args)...);
    url = s->url();
    return s;
}

std::shared_ptr<void> serve(const std::string& engine, std::string& url) {
    namespace t = deadbolt::test;
    if (engine == "redis") return start<RedisServer>(url);
#ifdef DEADBOLT_SERVE_ETCD
    if (engine == "etcd") return start<t::EtcdCluster>(url, 1);
#endif
#ifdef DEADBOLT_SERVE_ZK
    if (engine == "zookeeper") return start<t::ZkEnsemble>(url, 1);
#endif
#ifdef DEADBOLT_SERVE_PG
    if (engine == "postgres") return start<t::PgServer>(url);
#endif
#ifdef DEADBOLT_SERVE_MY
    if (engine == "mariadb") return start<t::MariaDbServer>(url);
#endif
#ifdef DEADBOLT_SERVE_MC
    if (engine == "memcached") return start<t::McServer>(url);
#endif
    return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: deadbolt-test-server ENGINE (redis, etcd, zookeeper, postgres, "
                     "mariadb, memcached)\n";
        return 64;
    }
    try {
        std::string url;
        auto server = serve(argv[1], url);
        if (!server) {
            std::cerr << "deadbolt-test-server: no engine '" << argv[1] << "' in this build\n";
            return 64;
        }
        std::cout << url << std::endl;
        while (std::getchar() != EOF) {
        }
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "deadbolt-test-server: " << argv[1] << " did not start: " << e.what() << "\n";
        return 1;
    }
}
