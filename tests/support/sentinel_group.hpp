// SentinelGroup: a primary, two replicas replicating through stallable proxies, and three
// real sentinels watching them as "db", ready when every sentinel sees the others.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "eventually.hpp"
#include "redis_server.hpp"
#include "tcp_proxy.hpp"

namespace deadbolt::test {

inline std::string field(const RawReply& flat, const std::string& name) {
    for (std::size_t i = 0; i + 1 < flat.elements.size(); i += 2)
        if (flat.elements[i].str == name) return flat.elements[i + 1].str;
    return {};
}

// The replicas replicate through proxies, so a test can hold replication back.
struct SentinelGroup {
    RedisServer primary{{"--repl-diskless-sync-delay", "0"}};
    TcpProxy link1{primary.port()}, link2{primary.port()};
    // Promoted, a replica must resync the others at once, not after the default 5 s.
    RedisServer r1{{"--replicaof", "127.0.0.1", std::to_string(link1.port()),
                    "--repl-diskless-sync-delay", "0"}};
    RedisServer r2{{"--replicaof", "127.0.0.1", std::to_string(link2.port()),
                    "--repl-diskless-sync-delay", "0"}};
    std::vector<std::unique_ptr<RedisServer>> sentinels;

    SentinelGroup() {
        for (int i = 0; i < 3; ++i)
            sentinels.push_back(RedisServer::sentinel(
                "sentinel monitor db 127.0.0.1 " + std::to_string(primary.port()) +
                " 2\nsentinel down-after-milliseconds db 1000\n"
                "sentinel failover-timeout db 5000\nsentinel parallel-syncs db 2\n"));
        // Ready when every sentinel sees both replicas and the other sentinels, and the
        // replicas acknowledge writes.
        bool ready = eventually(
            [&] {
                for (auto& s : sentinels) {
                    auto m = s->raw().cmd({"SENTINEL", "master", "db"});
                    if (field(m, "num-slaves") != "2" || field(m, "num-other-sentinels") != "2")
                        return false;
                }
                auto raw = primary.raw();
                raw.cmd({"SET", "ready", "1"});
                return raw.cmd({"WAIT", "2", "100"}).integer == 2;
            },
            std::chrono::seconds(30));
        if (!ready) ADD_FAILURE() << "sentinels never saw the replicas and each other";
    }
    std::string url(const std::string& query = "") const {
        std::string u = "redis-sentinel://";
        for (std::size_t i = 0; i < sentinels.size(); ++i)
            u += (i ? ",127.0.0.1:" : "127.0.0.1:") + std::to_string(sentinels[i]->port());
        return u + "/db" + (query.empty() ? "" : "?" + query);
    }
    std::string primary_port() {
        auto r = sentinels[0]->raw().cmd({"SENTINEL", "get-master-addr-by-name", "db"});
        return r.elements.size() == 2 ? r.elements[1].str : "";
    }
    // Forces a failover and waits until the sentinels name a new primary; returns its port.
    std::string fail_over() {
        auto before = primary_port();
        sentinels[0]->raw().cmd({"SENTINEL", "FAILOVER", "db"});
        std::string after;
        if (!eventually([&] { return (after = primary_port()) != before; },
                        std::chrono::seconds(30)))
            ADD_FAILURE() << "no failover";
        return after;
    }
    RedisServer& by_port(const std::string& port) {
        for (auto* s : {&primary, &r1, &r2})
            if (std::to_string(s->port()) == port) return *s;
        throw std::runtime_error("no server on port " + port);
    }
};

}  // namespace deadbolt::test
