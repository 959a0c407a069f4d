// RedisHolding: what Redis keeps of one holding (or of a waiter's place): the lease kind's
// scripts and the keys and arguments they take.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/redis/commands.hpp"
#include "backends/redis/specs.hpp"
#include "core/store.hpp"

namespace deadbolt::detail {

struct RedisHolding final : Holding {
    const LeaseKind* kind = nullptr;         // extends and checks it (none for a waiter's place)
    const Script* release = nullptr;         // what releasing runs: kind's, or a waiter's abandon
    std::vector<std::string> keys;           // KEYS of those scripts
    std::vector<std::string> lease_keys;     // KEYS of extend and check (RedisSpec::lease_keys)
    std::vector<std::string> lineless_keys;  // a release's fallback (RedisSpec::lineless_keys)
    std::vector<std::string> args;           // ARGV after {token, channel, px}
    std::string token;
    std::string channel;              // where its release is announced
    std::chrono::milliseconds px{0};  // how long a release or check keeps what it touches
    std::optional<std::size_t> node;  // Redlock: on this node only (a cleanup's)
    // The keys whose keyspace events the client listens for (RedisStore::watch), while on is
    // set; shared by copies, so they are given up once.
    struct Watch {
        std::atomic<bool> on{true};
        std::vector<std::string> keys;
    };
    std::shared_ptr<Watch> watching;

    /// What token holds under spec (or may hold after a lost reply).
    static std::shared_ptr<RedisHolding> held(const RedisSpec& spec, std::string token,
                                              std::chrono::milliseconds px);
    /// token's place as a waiter under spec, which a waiter that gives up drops.
    static std::shared_ptr<RedisHolding> waiting(const RedisSpec& spec, std::string token,
                                                 std::chrono::milliseconds px);

    /// A call of script for it, ARGV {token, channel, px_s, args...}; px_s must outlive it.
    ScriptCall call(const Script& script, const std::string& px_s) const;
    /// The same for its kind's extend or check, whose KEYS leave the lines out.
    ScriptCall lease_call(const Script& script, const std::string& px_s) const;
    /// The keys whose loss is the holding's: the name's key (each name's, for a MultiLock), or
    /// the readers' set for a reader.
    std::vector<std::string_view> main_keys() const;
};

}  // namespace deadbolt::detail
