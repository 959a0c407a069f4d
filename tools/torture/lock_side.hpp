// LockSide: everything between the workers and the lock's data. A primary redis-server,
// optionally a standby replica (for failover), each on the steerable clock, and one TCP proxy
// per worker, so a fault can hit one worker's connections or move all of them. For Redlock,
// N independent masters instead, each on its own steerable clock (a clock fault hits one
// node), and one proxy per worker per node. For etcd, three members and one proxy per worker
// per member. For a database (PostgreSQL, MariaDB), one server and one proxy per worker.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "redis_cluster.hpp"
#include "redis_server.hpp"
#include "steered_clock.hpp"
#include "tcp_proxy.hpp"

namespace deadbolt::test {
class EtcdCluster;
class ZkEnsemble;
class PgServer;
class MariaDbServer;
class McServer;
}  // namespace deadbolt::test

namespace deadbolt::torture {

/// What the lock lives on.
struct SideSpec {
    bool aof = false;        // the servers log every write with `appendfsync always`
    bool standby = false;    // start a replica
    int nodes = 1;           // > 1: that many independent masters (Redlock) instead of a primary
    bool sentinels = false;  // a primary, a replica and three sentinels, found through them
    bool cluster = false;    // a Redis Cluster of 3 masters with a replica each
    bool etcd = false;       // a 3-member etcd cluster
    bool zk = false;         // a 3-server ZooKeeper ensemble
    std::chrono::milliseconds session{0};  // zk: the session timeout workers ask for
    std::string database;                  // "pg", "mariadb" or "memcached": one such server
};

class LockSide {
  public:
    LockSide(const std::string& dir, int workers, const SideSpec& spec);
    ~LockSide();

    /// Where worker i connects (through its own proxies): a redis://, redlock:// or etcd:// URL.
    std::string url_for(int worker) const;
    /// Worker i's port for the naive kinds (its proxy to the primary, or to node 0).
    std::uint16_t port_for(int worker) const {
        return proxies_.empty() ? 0 : proxies_[worker * nodes_]->port();
    }
    /// Worker i's proxies (one, or one per Redlock node).
    std::vector<test::TcpProxy*> proxies_of(int worker);
    /// The primary's clock; on Redlock, node 0's (a clock fault hits one node).
    SteeredClock& clock() { return *clocks_.front(); }

    /// kill -9 the primary (on Redlock: node `node`), keep it down for `down`, start it again
    /// (with its AOF, if any; without, empty).
    void restart_primary(std::chrono::milliseconds down, std::size_t node = 0);
    std::size_t nodes() const { return nodes_; }
    /// Lets replication fall `lag` behind (its link stalled), stops (SIGSTOP) the primary,
    /// promotes the standby (REPLICAOF NO ONE) and moves every proxy to it; after `down` the
    /// old primary resumes as the new one's replica. Writes in the lag are lost, as they are
    /// when a real async replica is promoted.
    void failover(std::chrono::milliseconds lag, std::chrono::milliseconds down);
    bool has_standby() const { return nodes_ == 1 && servers_.size() > 1 && sentinels_.empty(); }
    bool has_sentinels() const { return !sentinels_.empty(); }
    /// A consensus engine (etcd, ZooKeeper): members, a leader, state that survives a minority.
    bool consensus() const { return etcd_ != nullptr || zk_ != nullptr; }
    /// SIGSTOPs the primary the sentinels name, waits until they promote its replica, keeps the
    /// old one stopped for `down` more, then resumes it (the sentinels make it a replica).
    /// Writes it had not replicated are lost. Returns false if no failover happened in 20 s.
    bool sentinel_failover(std::chrono::milliseconds down);
    /// The same for the cluster master of the lock's slot: SIGSTOP, the cluster promotes its
    /// replica, `down` later it resumes and rejoins as a replica (waited for, so the next
    /// failover has a replica to promote).
    bool cluster_failover(std::chrono::milliseconds down);

    /// etcd, ZooKeeper: kill -9 one member (the leader, or one picked by `pick` among all), keep it
    /// down for `down`, start it again with its data. False when there was no leader to kill.
    bool restart_member(bool leader, std::size_t pick, std::chrono::milliseconds down);

  private:
    void follow(test::RedisServer& replica, const test::RedisServer& primary);
    void point_proxies(std::uint16_t port);
    std::size_t nodes_ = 1;
    std::vector<std::unique_ptr<SteeredClock>> clocks_;  // one for all servers, or per node
    std::vector<std::unique_ptr<test::RedisServer>> servers_;
    std::size_t primary_ = 0;
    std::vector<std::unique_ptr<test::TcpProxy>> proxies_;
    std::unique_ptr<test::TcpProxy> replication_;  // standby -> primary, so it can lag
    std::vector<std::unique_ptr<test::RedisServer>> sentinels_;
    std::string sentinel_primary() const;  // the primary's port, as sentinel 0 names it
    std::unique_ptr<test::RedisCluster> cluster_;
    std::unique_ptr<test::EtcdCluster> etcd_;
    std::unique_ptr<test::ZkEnsemble> zk_;
    std::unique_ptr<test::PgServer> pg_;
    std::unique_ptr<test::MariaDbServer> mariadb_;
    std::unique_ptr<test::McServer> mc_;
    std::chrono::milliseconds session_{0};
};

}  // namespace deadbolt::torture
