// N independent redis-servers for Redlock tests, and what they hold.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "code_of.hpp"
#include "deadbolt/error.hpp"
#include "redis_server.hpp"

namespace deadbolt::test {

struct RedlockNodes {
    std::vector<std::unique_ptr<RedisServer>> nodes;
    explicit RedlockNodes(int n) {
        for (int i = 0; i < n; ++i) nodes.push_back(std::make_unique<RedisServer>());
    }
    RedisServer& operator[](std::size_t i) { return *nodes[i]; }
    std::string url(const std::string& query = "") const {
        std::string u = "redlock://";
        for (std::size_t i = 0; i < nodes.size(); ++i)
            u += (i ? "," : "") + std::string("127.0.0.1:") + std::to_string(nodes[i]->port());
        return query.empty() ? u : u + "?" + query;
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
