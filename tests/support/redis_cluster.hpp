// RedisCluster: a real Redis Cluster of 3 masters and 3 replicas on free ports, created with
// redis-cli --cluster create; and the steps of moving a slot by hand (SETSLOT + MIGRATE).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "redis_server.hpp"

namespace deadbolt::test {

class RedisCluster {
  public:
    /// Starts 6 nodes and joins them (3 masters, 1 replica each); returns once every node
    /// says the cluster is ok and every replica is in sync. Throws when that never happens.
    explicit RedisCluster(std::chrono::milliseconds node_timeout = std::chrono::milliseconds(1000));

    /// redis-cluster://127.0.0.1:<node 0>,127.0.0.1:<node 1>[?query]
    std::string url(const std::string& query = "") const;
    RedisServer& node(std::size_t i) { return *nodes_[i]; }
    std::size_t size() const { return nodes_.size(); }

    /// Hash slot of key (CLUSTER KEYSLOT).
    std::uint16_t slot(const std::string& key);
    /// The node that serves slot as master now, as a live node's CLUSTER SLOTS says.
    std::size_t master_of_slot(std::uint16_t slot);
    std::size_t master_of(const std::string& key) { return master_of_slot(slot(key)); }
    /// The replica of master m (INFO replication of the others).
    std::size_t replica_of(std::size_t m);
    /// Indices of the current masters.
    std::vector<std::size_t> masters();
    /// The node's cluster id (CLUSTER MYID).
    std::string id(std::size_t i);
    /// True once every running node reports cluster_state:ok and names `master` (when given)
    /// as the master of slot.
    bool wait_ok(std::chrono::milliseconds within, int slot = -1, int master = -1);

    /// Slot migration by hand, in the three steps a resharding takes: mark the slot
    /// importing on `to` and migrating on `from`; MIGRATE its keys; give it to `to` everywhere.
    void migrate_begin(std::uint16_t slot, std::size_t from, std::size_t to);
    void migrate_keys(std::uint16_t slot, std::size_t from, std::size_t to);
    void migrate_end(std::uint16_t slot, std::size_t to);

    /// Which nodes are running (not killed by the test).
    std::vector<bool> alive;

  private:
    RawReply any(const std::vector<std::string>& argv);
    std::vector<std::unique_ptr<RedisServer>> nodes_;
};

}  // namespace deadbolt::test
