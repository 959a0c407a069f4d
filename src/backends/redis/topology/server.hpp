// Server: where a client's keyed commands go. One Redis server (OneServer), or a Redis Cluster
// that sends each command to the master of its keys' slot (Cluster). Primitives talk to this,
// so they work the same on both.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "backends/redis/commands.hpp"
#include "backends/redis/net/connection.hpp"

namespace deadbolt::detail {

class Server {
  public:
    virtual ~Server() = default;

    /// Runs calls in order (one pipeline per server involved); replies[i] is calls[i]'s, error
    /// replies included. The Status fails (as Connection::exec does) when no call got a reply;
    /// a call whose server alone failed gets an error reply saying why.
    virtual Status eval_many(std::span<const ScriptCall> calls, std::vector<Reply>& replies,
                             Clock::time_point deadline) = 0;
    /// Plain commands as one pipeline on the server that holds key; the first error reply
    /// becomes the Status.
    virtual Status pipeline(std::string_view key,
                            const std::vector<std::vector<std::string_view>>& cmds,
                            std::vector<Reply>& replies, Clock::time_point deadline) = 0;
    /// sync_replicas: WAIT on each server the calls' keys live on (confirm_replicated); ok at
    /// once when sync_replicas is 0.
    virtual Status confirm_replicated(std::span<const ScriptCall> calls,
                                      Clock::time_point deadline) = 0;
    /// Checks every server answers PING; the error names the one that did not.
    virtual Status ping(Clock::time_point deadline) = 0;
    /// Every server that holds keys now (a cluster's masters of the last map), e.g. to SCAN.
    virtual std::vector<std::shared_ptr<Connection>> primaries() = 0;

    /// One script; an error reply becomes the Status.
    Status eval(const ScriptCall& call, Reply& reply, Clock::time_point deadline);
    /// One plain command on key's server; an error reply becomes the Status.
    Status command(std::string_view key, const std::vector<std::string_view>& argv, Reply& reply,
                   Clock::time_point deadline);
};

/// One Redis server (a redis:// URL, a Sentinel's primary, or a Redlock node).
class OneServer final : public Server {
  public:
    /// c serves every call it is free for; callers that find it busy open up to `lanes`
    /// connections in all (RedisOptions::command_connections, checked at connect to be at
    /// least 1), then share them.
    explicit OneServer(std::shared_ptr<Connection> c, std::size_t lanes = 1)
        : first_(std::move(c)), ep_(first_.conn->endpoint()), max_lanes_(lanes) {}

    Status eval_many(std::span<const ScriptCall> calls, std::vector<Reply>& replies,
                     Clock::time_point deadline) override;
    Status pipeline(std::string_view key, const std::vector<std::vector<std::string_view>>& cmds,
                    std::vector<Reply>& replies, Clock::time_point deadline) override;
    Status confirm_replicated(std::span<const ScriptCall> calls,
                              Clock::time_point deadline) override;
    Status ping(Clock::time_point deadline) override;
    std::vector<std::shared_ptr<Connection>> primaries() override { return {first_.conn}; }
    /// From the next request on, every connection talks to host:port (a failover moved
    /// the primary); requests in flight fail as Connection::retarget says.
    void retarget(const std::string& host, std::uint16_t port);

  private:
    // A connection and how many blocking calls are on it now.
    struct Lane {
        explicit Lane(std::shared_ptr<Connection> c) : conn(std::move(c)) {}
        std::shared_ptr<Connection> conn;
        std::atomic<int> users{0};
    };
    // One call's hold on a lane, released when the call returns.
    class Claim {
      public:
        explicit Claim(Lane& l) : lane_(&l) {}
        Claim(const Claim&) = delete;
        Claim& operator=(const Claim&) = delete;
        ~Claim() { lane_->users.fetch_sub(1, std::memory_order_release); }
        Connection& conn() const { return *lane_->conn; }

      private:
        Lane* lane_;
    };

    // A lane for one blocking call: a free one, else a new one while under the limit,
    // else the first (pipelined there behind the other callers: joining the busy extra
    // ones instead spread hand-overs between threads over all of them, and at 64 threads
    // cost throughput and a p99 of 10 ms against 3 ms). A lane is taken when it is handed
    // out, not when its call reaches the socket, so overlapping callers do not pile onto
    // a new connection that merely looks free.
    Claim lane();
    static bool try_take(Lane& l);

    Lane first_;
    const Endpoint ep_;  // as given: first_'s own changes under its lock when retargeted
    const std::size_t max_lanes_;
    std::mutex m_;
    std::vector<std::unique_ptr<Lane>> more_;  // only grows: lanes stay where they are
    std::optional<std::pair<std::string, std::uint16_t>> moved_;
};

}  // namespace deadbolt::detail
