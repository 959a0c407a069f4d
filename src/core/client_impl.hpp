// ClientImpl: what Client handles, primitives and Leases share, whatever the engine: the
// options, the store (the engine, behind the seam), the renewer, this process's local queues
// and handoffs. A backend makes the store; nothing here knows which engine it is.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/event_loop.hpp"
#include "core/handoffs.hpp"
#include "core/lease_state.hpp"
#include "core/local_queue.hpp"
#include "core/renewer.hpp"
#include "core/store.hpp"
#include "deadbolt/options.hpp"

namespace deadbolt::detail {

struct ClientImpl : std::enable_shared_from_this<ClientImpl> {
    using MakeStore = std::function<std::shared_ptr<Store>(ClientImpl&)>;
    /// A client whose engine make_store makes (it may keep a reference to this client, which
    /// outlives it).
    ClientImpl(ClientOptions o, const MakeStore& make_store);
    ~ClientImpl();
    ClientImpl(const ClientImpl&) = delete;
    ClientImpl& operator=(const ClientImpl&) = delete;

    /// Now on the clock leases are measured on (ClientOptions::clock).
    Clock::time_point now() const { return now_on(options.clock); }
    /// A deadline one command timeout from now.
    Clock::time_point deadline() const { return Clock::now() + options.command_timeout; }

    /// Holdings of reentrant locks under their default owner (name, owner), counted across
    /// this client's handles: they share reentrancy in one thread, as Redisson's do, and a
    /// holding the engine shows that is not counted here is a leftover, not a re-entry.
    /// The count now. Never throws.
    int reentrant_holds(std::string_view name, std::string_view owner) const noexcept;
    /// Counts a holding of owner on name on; throws bad_alloc, counting nothing.
    void count_reentrant_hold_on(std::string_view name, std::string_view owner);
    /// Counts one off. Never throws: unlock() and destructors count off.
    void count_reentrant_hold_off(std::string_view name, std::string_view owner) noexcept;

    /// The engine's capability get (&Store::latches, ...), or its refusal thrown (UsageError).
    template <class C>
    C& offered(C* (Store::*get)()) const {
        return detail::offered(*store, ((*store).*get)());
    }

    /// The client's event loop (the asynchronous API runs there), started at first use.
    EventLoop& loop();

    ClientOptions options;
    std::string id;  // random per client: the default owner prefix of reentrant locks
    std::shared_ptr<Store> store;
    std::shared_ptr<Renewer> renewer;
    std::vector<std::string> warnings;  // legal but weak configuration, found at connect
    LocalQueue local;
    Handoffs handoffs;

  private:
    // How the store's doubts reach the renewer, closed when the client ends.
    struct DoubtGate {
        std::mutex m;
        std::weak_ptr<Renewer> renewer;
        bool closed = false;
        void doubt(Store::Concerns concerns) noexcept;
    };
    std::shared_ptr<DoubtGate> doubts_;
    // (name, owner), looked up by views: counting off allocates nothing.
    struct HoldLess {
        using is_transparent = void;
        template <class A, class B>
        bool operator()(const A& a, const B& b) const noexcept {
            return std::pair<std::string_view, std::string_view>(a.first, a.second) <
                   std::pair<std::string_view, std::string_view>(b.first, b.second);
        }
    };
    mutable std::mutex reentrant_m_;
    std::map<std::pair<std::string, std::string>, int, HoldLess> reentrant_holds_;
    std::mutex loop_m_;
    std::unique_ptr<EventLoop> loop_;  // last: stopped (its work drained) before the rest goes
};

}  // namespace deadbolt::detail
