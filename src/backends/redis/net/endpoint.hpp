// Endpoint: everything needed to open one session with a Redis server.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "deadbolt/options.hpp"
#include "deadbolt/redis_options.hpp"

namespace deadbolt::detail {

struct Endpoint {
    enum class Kind { tcp, unix_socket };
    Kind kind = Kind::tcp;
    std::string host = "127.0.0.1";  // tcp: name or address (IPv6 without brackets)
    std::uint16_t port = 6379;
    std::string path;       // unix socket path
    ClientOptions options;  // timeouts, auth, TLS, prefix
    RedisOptions redis;     // db, sync_replicas, command_connections
    // Retry a refused connect within one call's deadline. Off for Redlock nodes: a dead node
    // must cost its vote at once, not the caller's whole deadline.
    bool retry_connect = true;
    // Set once a session through this endpoint (or a copy of it) was opened. Until then a
    // refusal is not a restart to ride out but a wrong address, and a peer that hangs up on
    // PING is no Redis server: the first connect says so at once instead of retrying.
    std::shared_ptr<std::atomic<bool>> reached = std::make_shared<std::atomic<bool>>(false);

    std::string describe() const;  // "127.0.0.1:6379" or "unix:/path", for error messages
};

}  // namespace deadbolt::detail
