// Round: one request sent to several Redlock nodes at once from the client's event loop (one
// thread writes every node's socket and one wait serves all), complete as soon as its outcome
// is decided (a majority for or against, by the caller's rule) or every node has answered.
// What arrives after the decision is dropped: the caller treats those nodes as unknown.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "backends/redis/net/async_connection.hpp"

namespace deadbolt::detail {

/// One node's answer: its Status, and when ok one reply per request.
struct NodeReplies {
    Status status;
    std::vector<Reply> replies;
    bool arrived = false;  // false: the round was decided without it (status says so)
};

using Send = std::function<void(AsyncConnection&, AsyncConnection::Done)>;
/// Whether the answers so far decide the round (entries not arrived yet say so).
using Decided = std::function<bool(const std::vector<NodeReplies>&)>;
using RoundDone = std::function<void(std::vector<NodeReplies>)>;

/// Sends on every connection at once; done(results) runs once on the loop, result i being
/// conns[i]'s, when decided() says so (null: when all answered). Loop thread only.
void start_round(std::span<const std::shared_ptr<AsyncConnection>> conns, const Send& send,
                 Decided decided, RoundDone done);

}  // namespace deadbolt::detail
