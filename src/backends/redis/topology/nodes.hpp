// Nodes: the servers a client's leases live on. One Server (a server or a Cluster), or
// Redlock's independent masters (DESIGN sections 2 and 6), asked all at once in rounds on the
// client's event loop; what a lease script answers there is the majority's verdict, so the
// renewer and Lease need not know which of the two they talk to.
#pragma once

#include <atomic>
#include <memory>
#include <span>
#include <vector>

#include "backends/redis/commands.hpp"
#include "backends/redis/net/connection.hpp"
#include "backends/redis/topology/round.hpp"
#include "backends/redis/topology/server.hpp"
#include "core/event_loop.hpp"

namespace deadbolt::detail {

class Nodes {
  public:
    /// One server, or a cluster that routes each call.
    explicit Nodes(std::shared_ptr<Server> one);
    using LoopOf = std::function<EventLoop&()>;
    /// Redlock over these independent masters; fencing: run the fence round (DESIGN section 6).
    /// Rounds run on loop() (started at the first).
    Nodes(const std::vector<Endpoint>& redlock, bool fencing, LoopOf loop);
    Nodes(const Nodes&) = delete;
    Nodes& operator=(const Nodes&) = delete;

    bool redlock() const { return redlock_; }
    bool fencing() const { return fencing_; }
    std::size_t size() const { return redlock_ ? conns_.size() : 1; }
    /// The first Redlock node (pub/sub and inspection use it).
    const std::shared_ptr<Connection>& first() const { return conns_.front(); }
    /// Node i's blocking connection, for a request to it alone (a cleanup on one node).
    Connection& node(std::size_t i) const { return *conns_[i]; }
    /// Redlock: the event loop its rounds run on.
    EventLoop& loop() const { return loop_(); }
    /// Redlock: the fence round 1 proposes (DESIGN section 6): the clock in microseconds, as
    /// the nodes' own fences are, and above every fence this client agreed on, so that nodes
    /// whose counters are below it agree on it at once.
    std::uint64_t proposal() const;
    /// Redlock: this client agreed on fence; later proposals are above it.
    void agreed(std::uint64_t fence);

    /// Redlock, on the loop only: calls as one pipeline on each node in `which` (every node
    /// when empty) at once, each by deadline; done(results) once, result i belonging to
    /// which[i] (node i when empty), as soon as decided(results) (null: all answered).
    void async_everywhere(AsyncConnection::Calls calls, Clock::time_point deadline,
                          const std::vector<std::size_t>& which, Decided decided, RoundDone done);
    /// The same from any thread, blocking until every node answered or its deadline passed.
    std::vector<NodeReplies> everywhere(std::span<const ScriptCall> calls,
                                        Clock::time_point deadline,
                                        const std::vector<std::size_t>& which = {});

    /// One plain command on every node at once, each by connect + command timeout (connect's
    /// checks, ping); replies[0] holds each node's answer.
    std::vector<NodeReplies> command_everywhere(const std::vector<std::string_view>& argv);

    /// Lease scripts (extend, release, check: integer n >= 1 = done and ours, 0 = not ours).
    /// On one server the replies are the server's. On Redlock each reply is the verdict: the
    /// largest yes when a majority said yes, 0 once a majority cannot, else an error reply;
    /// the Status fails (no_quorum) only when no node answered at all.
    Status eval_many(std::span<const ScriptCall> calls, std::vector<Reply>& replies,
                     Clock::time_point deadline);
    /// Redlock, on the loop only: eval_many's verdicts, as soon as every call's is decided.
    void async_eval_many(AsyncConnection::Calls calls, Clock::time_point deadline,
                         AsyncConnection::Done done);
    /// One lease script; an error reply becomes the Status (no_quorum when undecided).
    Status eval(const ScriptCall& call, Reply& reply, Clock::time_point deadline);
    /// sync_replicas after calls (Server::confirm_replicated); Redlock refuses the option.
    Status confirm_replicated(std::span<const ScriptCall> calls, Clock::time_point deadline);

    /// Ok when a majority of results succeeded; else no_quorum saying which nodes failed and
    /// why, followed by advice.
    Status need_majority(const std::vector<NodeReplies>& results, std::string_view advice) const;

    /// "2 of 5 Redlock nodes answered (3 needed): host:port: why; ..." for a failed round.
    std::string describe_failures(const std::vector<NodeReplies>& results, std::size_t answered,
                                  const std::vector<std::size_t>& which = {}) const;

    /// Closes the loop's connections (what is in flight fails); never throws.
    void stop() noexcept;

  private:
    // The loop's connections to `which` (every node when empty), made at first use.
    std::vector<std::shared_ptr<AsyncConnection>> on_loop(const std::vector<std::size_t>& which);
    void start(const Send& send, const std::vector<std::size_t>& which, Decided decided,
               RoundDone done);
    std::vector<NodeReplies> blocking(const Send& send, const std::vector<std::size_t>& which);

    bool redlock_ = false;
    bool fencing_ = true;
    std::shared_ptr<Server> one_;                     // not Redlock
    std::vector<std::shared_ptr<Connection>> conns_;  // Redlock
    LoopOf loop_;
    std::vector<std::shared_ptr<AsyncConnection>> async_;  // Redlock, on the loop
    std::atomic<bool> async_used_{false};
    std::atomic<std::uint64_t> agreed_{0};  // the highest fence agreed here
};

}  // namespace deadbolt::detail
