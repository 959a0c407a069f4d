// Sentinel: finds the primary that a set of Redis Sentinels watch, and follows it through
// failovers (DESIGN section 2): a +switch-master message from a sentinel, or a periodic
// re-check (a safety net for a missed message), leads to a new discovery, and when the
// primary moved the owner is told (it retargets its connections and checks its leases).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/redis/net/connection.hpp"
#include "backends/redis/net/endpoint.hpp"
#include "backends/redis/net/status.hpp"
#include "backends/redis/net/subscriber.hpp"
#include "core/background.hpp"

namespace deadbolt::detail {

class Sentinel : public std::enable_shared_from_this<Sentinel> {
  public:
    using Moved = std::function<void(const std::string& host, std::uint16_t port)>;

    Sentinel(std::vector<Endpoint> sentinels, std::string master_name);
    ~Sentinel();
    Sentinel(const Sentinel&) = delete;
    Sentinel& operator=(const Sentinel&) = delete;

    /// Asks the sentinels in turn; the first that knows master_name gives its address.
    /// Errors: connect_failed when no sentinel answers (each one's error in the message),
    /// invalid_argument when the sentinels answer but do not know the name.
    Status discover(std::string& host, std::uint16_t& port) const;

    /// Follows the primary from host:port on: calls moved(new host, new port) on a background
    /// thread each time it changes. Call once, on a Sentinel owned by a shared_ptr.
    void follow(std::string host, std::uint16_t port, Moved moved);
    /// Stops following; joins the thread unless called from it (inside moved()). Never throws.
    void stop() noexcept;

  private:
    void run();

    std::vector<Endpoint> sentinels_;
    // One connection per sentinel, kept: discover() runs every second. Used by connect() and
    // then only by the following thread, never at once.
    mutable std::vector<std::unique_ptr<Connection>> conns_;
    std::string name_;
    Moved moved_;
    std::string host_;
    std::uint16_t port_ = 0;
    std::unique_ptr<Subscriber> events_;  // +switch-master from the first sentinel
    std::mutex m_;
    std::condition_variable cv_;
    bool stopping_ = false;
    Background thread_;
};

}  // namespace deadbolt::detail
