// AsyncCluster: the asynchronous API's way to a Redis Cluster's masters, on the client's
// event loop. It follows the blocking Cluster's rules without blocking the loop: MOVED
// updates the shared map and is followed, ASK is followed once with ASKING, TRYAGAIN and
// CLUSTERDOWN (which ran nothing) and a master that cannot be reached are tried again after a
// jittered pause on a timer, and the map is re-read by the Cluster's own watch thread
// (reread_soon), never on the loop. Loop thread only.
#pragma once

#include <functional>
#include <map>
#include <memory>

#include "backends/redis/net/async_connection.hpp"
#include "backends/redis/topology/cluster.hpp"
#include "core/event_loop.hpp"

namespace deadbolt::detail {

class AsyncCluster : public std::enable_shared_from_this<AsyncCluster> {
  public:
    AsyncCluster(EventLoop& loop, std::shared_ptr<Cluster> cluster);
    AsyncCluster(const AsyncCluster&) = delete;
    AsyncCluster& operator=(const AsyncCluster&) = delete;

    /// Runs one script whose keys share a slot on that slot's master; done(status, reply)
    /// once, on the loop. Errors as AsyncConnection::eval once redirections, passing cluster
    /// states and unreachable masters have been retried until the deadline (busy when no
    /// master serves the slot by then).
    void eval(const ScriptCall& call, Clock::time_point deadline,
              std::function<void(Status, Reply)> done);
    /// Closes every node's connection for good; later calls fail with connection_lost, and
    /// so does a journey that was pausing.
    void close() noexcept;
    /// Closes as close() once every journey under way has ended (each by its deadline), then
    /// calls closed(): a release the caller did not wait for still reaches its master.
    /// Never throws.
    void close_when_idle(std::function<void()> closed) noexcept;

  private:
    struct Journey;
    std::shared_ptr<AsyncConnection> to(const NodeAddress& a);
    void drain_check() noexcept;  // ends a close_when_idle once no journey is left

    EventLoop& loop_;
    std::shared_ptr<Cluster> cluster_;
    std::map<NodeAddress, std::shared_ptr<AsyncConnection>> conns_;
    bool closed_ = false;
    std::size_t journeys_ = 0;       // under way
    std::function<void()> drained_;  // close_when_idle's, while it waits
};

}  // namespace deadbolt::detail
