// How a closing client ends its loop connections (AsyncConnection, AsyncCluster): off the
// loop it lets what they carry go out first, within each request's deadline (a release the
// caller did not wait for, a waiter's abandon); on the loop, where nothing may wait (a client
// that ended in one of its own handlers), they close at once.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "core/event_loop.hpp"

namespace deadbolt::detail {

/// Closes every one of conns (each has close() and close_when_idle(closed)) and, off the
/// loop, returns once all have closed. Never throws: out of memory, they close with the loop.
template <class Conn>
void close_all(EventLoop& loop, std::vector<std::shared_ptr<Conn>> conns) noexcept {
    if (conns.empty()) return;
    try {
        if (!loop.here()) {
            loop.wait<bool>([conns](const std::function<void(bool)>& deliver) {
                auto left = std::make_shared<std::size_t>(conns.size());
                for (const auto& c : conns)
                    c->close_when_idle([left, deliver] {
                        if (--*left == 0) deliver(true);
                    });
            });
            return;
        }
        // What is in flight fails now: its handlers, which hold the connections, run before
        // the loop ends instead of outliving it. The lambda owns its copy of conns: the loop
        // may run it after their owner is gone.
        loop.post([conns = std::move(conns)] {
            for (const auto& c : conns) c->close();
        });
    } catch (...) {  // NOLINT(bugprone-empty-catch): out of memory: they close with the loop
    }
}

}  // namespace deadbolt::detail
