// ClientImpl: the shared state behind Client handles, Mutexes and Leases.
#pragma once

#include <map>
#include <memory>
#include <mutex>

#include "backends/redis/net/connection.hpp"
#include "backends/redis/net/endpoint.hpp"
#include "backends/redis/net/subscriber.hpp"
#include "backends/redis/topology/cluster.hpp"
#include "backends/redis/topology/nodes.hpp"
#include "backends/redis/topology/sentinel.hpp"
#include "backends/redis/topology/server.hpp"
#include "core/handoffs.hpp"
#include "core/local_queue.hpp"
#include "core/renewer.hpp"
#include "core/store.hpp"

namespace deadbolt {
struct AcquireOptions;
class Lease;
}  // namespace deadbolt

namespace deadbolt::detail {

struct ClientImpl : std::enable_shared_from_this<ClientImpl> {
    /// A client of one server.
    explicit ClientImpl(const Endpoint& e);
    /// A Redlock client over these independent masters (the first one's options rule).
    ClientImpl(std::vector<Endpoint> redlock, bool fencing);
    /// A Redis Cluster client (seeds[0]'s options rule); the cluster's map is read already.
    ClientImpl(std::vector<Endpoint> seeds, std::shared_ptr<Cluster> cluster);
    ~ClientImpl();

    /// Now on the clock leases are measured on (ClientOptions::clock).
    Clock::time_point now() const { return now_on(ep.options.clock); }
    /// A deadline one command timeout from now.
    Clock::time_point deadline() const { return Clock::now() + ep.options.command_timeout; }
    /// The deadline of one operation on a lease of ttl: deadline(), or on Redlock a node
    /// timeout (a slow node must cost its vote, not the lease's validity).
    Clock::time_point lease_deadline(std::chrono::milliseconds ttl) const;
    /// The pub/sub connection, started on first use.
    Subscriber& subscriber();
    /// A failover moved the primary (Sentinel): every connection goes there, and every lease
    /// the new primary does not hold is reported lost.
    void primary_moved(const std::string& host, std::uint16_t port);

    Endpoint ep;
    std::string id;  // random per client: the default owner prefix of reentrant locks

    /// Holdings of reentrant locks under their default owner (key, owner), counted across
    /// this client's handles: they share reentrancy in one thread, as Redisson's do, and a
    /// holding the server shows that is not counted here is a leftover, not a re-entry.
    /// Adds delta and returns the count.
    int reentrant_holds(const std::string& key, const std::string& owner, int delta) {
        std::lock_guard lk(reentrant_m_);
        auto& n = reentrant_holds_[key + '\0' + owner];
        n += delta;
        int now = n;
        if (n <= 0) reentrant_holds_.erase(key + '\0' + owner);
        return now;
    }
    std::shared_ptr<Connection>
        conn;                        // the single server, the first Redlock node; none on a cluster
    std::shared_ptr<Server> server;  // where keyed commands go: conn, or the cluster
    std::shared_ptr<Cluster> cluster;  // redis-cluster:// clients
    std::shared_ptr<Nodes> nodes;      // where leases live: server, or the Redlock nodes
    std::shared_ptr<Store> store;      // the seam: what acquire, Lease and the renewer use
    std::shared_ptr<Renewer> renewer;
    std::vector<std::string> warnings;  // legal but weak configuration, found at connect
    LocalQueue local;
    Handoffs handoffs;

    std::shared_ptr<Sentinel> sentinel;  // redis-sentinel:// clients: follows the primary

  private:
    std::mutex reentrant_m_;
    std::map<std::string, int> reentrant_holds_;

    ClientImpl(Endpoint e, std::shared_ptr<Connection> c, std::shared_ptr<Server> s,
               std::shared_ptr<Nodes> n);

    std::mutex sub_m_;
    std::unique_ptr<Subscriber> sub_;
    std::string moved_host_;  // where the primary is now, once a failover moved it
    std::uint16_t moved_port_ = 0;
};

}  // namespace deadbolt::detail
