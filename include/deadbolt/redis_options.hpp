// RedisOptions: what only the Redis engine reads, handed to Client::connect through
// ClientOptions::engine. Each field is also a URL query option (?db=, ?sync_replicas=, ...),
// which overrides it.
#pragma once

#include <chrono>
#include <string_view>

#include "deadbolt/options.hpp"

namespace deadbolt {

/// Settings of a Redis client (redis://, rediss://, unix://, redis-sentinel://,
/// redis-cluster://, redlock://). Given to a client of another engine, Client::connect throws
/// UsageError.
struct RedisOptions final : EngineOptions {
    int db = 0;  ///< The database selected after connecting (also the URL's /db).
    /// After each acquire and extend, WAIT until this many replicas acknowledged the write
    /// (Redisson's checkLockSyncedSlaves); fewer within sync_timeout fails with
    /// errc::not_replicated (an acquisition is then released). It narrows, does not close, the
    /// window in which a failover loses a lock: replication stays asynchronous, and a replica
    /// that acknowledged may still not be the one promoted. 0 = off. redlock:// refuses it.
    int sync_replicas = 0;
    std::chrono::milliseconds sync_timeout{100};  ///< How long WAIT may block (it blocks the
                                                  ///< connection).
    /// Blocking callers that find the server's command connection busy open another, up to
    /// this many in all, and share them (pipelined) beyond: a reply then wakes its own caller
    /// instead of being handed over between threads. Opened when first needed; with
    /// sync_replicas always 1 (WAIT counts the writes of one connection). Below 1:
    /// Client::connect throws UsageError.
    int command_connections = 4;

    std::string_view engine() const noexcept override { return "redis"; }
};

}  // namespace deadbolt
