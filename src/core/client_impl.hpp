// ClientImpl: the shared state behind Client handles, Mutexes and Leases.
#pragma once

#include <memory>
#include <mutex>

#include "core/handoffs.hpp"
#include "core/local_queue.hpp"
#include "core/renewer.hpp"
#include "net/connection.hpp"
#include "net/endpoint.hpp"
#include "net/subscriber.hpp"

namespace deadbolt {
struct AcquireOptions;
class Lease;
}  // namespace deadbolt

namespace deadbolt::detail {

struct ClientImpl : std::enable_shared_from_this<ClientImpl> {
    explicit ClientImpl(Endpoint e);
    ~ClientImpl();

    /// Now on the clock leases are measured on (ClientOptions::clock).
    Clock::time_point now() const { return now_on(ep.options.clock); }
    /// A deadline one command timeout from now.
    Clock::time_point deadline() const { return Clock::now() + ep.options.command_timeout; }
    /// The pub/sub connection, started on first use.
    Subscriber& subscriber();

    Endpoint ep;
    std::string id;  // random per client: the default owner prefix of reentrant locks
    std::shared_ptr<Connection> conn;
    std::shared_ptr<Renewer> renewer;
    LocalQueue local;
    Handoffs handoffs;

  private:
    std::once_flag sub_once_;
    std::unique_ptr<Subscriber> sub_;
};

}  // namespace deadbolt::detail
