// N independent redis-servers for Redlock tests, and what they hold.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "code_of.hpp"
#include "deadbolt/error.hpp"
#include "redis_server.hpp"

namespace deadbolt::test {

/// A redlock:// URL over loopback ports (a node's own, or a proxy's in front of it).
inline std::string redlock_url(const std::vector<std::uint16_t>& ports,
                               const std::string& query = "") {
    std::string u = "redlock://";
    for (std::size_t i = 0; i < ports.size(); ++i)
        u += (i ? "," : "") + std::string("127.0.0.1:") + std::to_string(ports[i]);
    return query.empty() ? u : u + "?" + query;
}

struct RedlockNodes {
    std::vector<std::unique_ptr<RedisServer>> nodes;
    explicit RedlockNodes(int n) {
        for (int i = 0; i < n; ++i) nodes.push_back(std::make_unique<RedisServer>());
    }
    RedisServer& operator[](std::size_t i) { return *nodes[i]; }
    std::string url(const std::string& query = "") const {
        std::vector<std::uint16_t> ports;
        for (const auto& n : nodes) ports.push_back(n->port());
        return redlock_url(ports, query);
    }
    // How many live nodes answer `probe` (a command on one key) with `expected`.
    int answering(const std::vector<std::string>& probe, const std::string& expected) {
        int n = 0;
        for (auto& s : nodes) try {
                n += s->raw().cmd(probe).str == expected ? 1 : 0;
            } catch (const std::exception&) {  // a node the test stopped
            }
        return n;
    }
    // How many live nodes hold key with value token.
    int holding(const std::string& key, const std::string& token) {
        return answering({"GET", key}, token);
    }
};

}  // namespace deadbolt::test
