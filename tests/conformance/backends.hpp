// The backends every conformance suite runs against: a URL to connect to, and a way to take
// a holding away behind its holder's back (to prove loss is reported). The next engines add a
// backend here, not tests.
#pragma once

#include <memory>
#include <string>

#include "redis_cluster.hpp"
#include "redis_server.hpp"
#include "redlock_nodes.hpp"
#include "sentinel_group.hpp"

namespace deadbolt::conformance {

// Each backend says what it keeps: kQueues (a FIFO queue: FairMutex) and kCounts (counts
// that must add up: Semaphore, CountDownLatch). A backend that cannot keep one refuses it
// at once with the reason, and the suites check that instead.

/// One Redis server (redis://).
struct OneServer {
    static constexpr const char* kName = "OneServer";
    static constexpr bool kQueues = true, kCounts = true;
    test::RedisServer server;
    std::string url() const { return server.url(); }
    void take_away(const std::string& key) { server.raw().cmd({"DEL", key}); }
};

/// A primary with two replicas behind three sentinels (redis-sentinel://).
struct Sentinel {
    static constexpr const char* kName = "Sentinel";
    static constexpr bool kQueues = true, kCounts = true;
    test::SentinelGroup group;
    std::string url() const { return group.url(); }
    void take_away(const std::string& key) { group.primary.raw().cmd({"DEL", key}); }
};

/// Three masters with a replica each (redis-cluster://).
struct Cluster {
    static constexpr const char* kName = "Cluster";
    static constexpr bool kQueues = true, kCounts = true;
    test::RedisCluster cluster;
    std::string url() const { return cluster.url(); }
    void take_away(const std::string& key) {
        cluster.node(cluster.master_of(key)).raw().cmd({"DEL", key});
    }
};

/// Redlock over three independent masters (redlock://).
struct Redlock {
    static constexpr const char* kName = "Redlock";
    static constexpr bool kQueues = false, kCounts = false;
    test::RedlockNodes nodes{3};
    std::string url() const { return nodes.url(); }
    void take_away(const std::string& key) {
        for (auto& n : nodes.nodes) n->raw().cmd({"DEL", key});
    }
};

/// One backend per process, shared by a suite's tests (each uses names of its own).
template <class B>
B& shared() {
    static B b;
    return b;
}

/// Names gtest gives each backend's instantiation ("MutexContract/Cluster.Excludes...").
struct BackendName {
    template <class B>
    static std::string GetName(int) {
        return B::kName;
    }
};

}  // namespace deadbolt::conformance
