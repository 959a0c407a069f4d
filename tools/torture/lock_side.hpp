// LockSide: everything between the workers and the lock's data. A primary redis-server,
// optionally a standby replica (for failover), each on the steerable clock, and one TCP proxy
// per worker, so a fault can hit one worker's connections or move all of them.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "redis_server.hpp"
#include "steered_clock.hpp"
#include "tcp_proxy.hpp"

namespace deadbolt::torture {

class LockSide {
  public:
    /// aof: the servers log every write with `appendfsync always`; standby: start a replica.
    LockSide(const std::string& dir, int workers, bool aof, bool standby);
    ~LockSide();

    /// Where worker i connects (its own proxy).
    std::uint16_t port_for(int worker) const { return proxies_[worker]->port(); }
    test::TcpProxy& proxy(int worker) { return *proxies_[worker]; }
    SteeredClock& clock() { return clock_; }

    /// kill -9 the primary, keep it down for `down`, start it again (with its AOF, if any).
    void restart_primary(std::chrono::milliseconds down);
    /// Lets replication fall `lag` behind (its link stalled), stops (SIGSTOP) the primary,
    /// promotes the standby (REPLICAOF NO ONE) and moves every proxy to it; after `down` the
    /// old primary resumes as the new one's replica. Writes in the lag are lost, as they are
    /// when a real async replica is promoted.
    void failover(std::chrono::milliseconds lag, std::chrono::milliseconds down);
    bool has_standby() const { return servers_.size() > 1; }

  private:
    void follow(test::RedisServer& replica, const test::RedisServer& primary);
    void point_proxies(std::uint16_t port);
    SteeredClock clock_;  // the servers' wall clock
    std::vector<std::unique_ptr<test::RedisServer>> servers_;
    std::size_t primary_ = 0;
    std::vector<std::unique_ptr<test::TcpProxy>> proxies_;
    std::unique_ptr<test::TcpProxy> replication_;  // standby -> primary, so it can lag
};

}  // namespace deadbolt::torture
