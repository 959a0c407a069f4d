// Server: where a client's keyed commands go. One Redis server (OneServer), or a Redis Cluster
// that sends each command to the master of its keys' slot (Cluster). Primitives talk to this,
// so they work the same on both.
#pragma once

#include <memory>
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
    explicit OneServer(std::shared_ptr<Connection> c) : conn_(std::move(c)) {}

    Status eval_many(std::span<const ScriptCall> calls, std::vector<Reply>& replies,
                     Clock::time_point deadline) override;
    Status pipeline(std::string_view key, const std::vector<std::vector<std::string_view>>& cmds,
                    std::vector<Reply>& replies, Clock::time_point deadline) override;
    Status confirm_replicated(std::span<const ScriptCall> calls,
                              Clock::time_point deadline) override;
    Status ping(Clock::time_point deadline) override;
    std::vector<std::shared_ptr<Connection>> primaries() override { return {conn_}; }

  private:
    std::shared_ptr<Connection> conn_;
};

}  // namespace deadbolt::detail
