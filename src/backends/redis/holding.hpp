// RedisHolding: what Redis keeps of one holding (or of a waiter's place): the lease kind's
// scripts and the keys and arguments they take.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
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
    const LeaseKind* kind = nullptr;  // extends and checks it (none for a waiter's place)
    const Script* release = nullptr;  // what releasing runs: kind's, or a waiter's abandon
    // The keys, arguments and channel its scripts take are its spec's, shared, not copied
    // (four lists and the channel copied were a fifth of a Redis cycle's allocations).
    std::shared_ptr<const RedisSpec> spec;
    bool waiter = false;                // a waiter's place: the abandon's keys, no fallback
    std::vector<std::string> own_args;  // a waiter's ARGV after {token, channel, px}
    std::string token;
    std::chrono::milliseconds px{0};  // how long a release or check keeps what it touches
    std::optional<std::size_t> node;  // Redlock: on this node only (a cleanup's)
    // A fixed owner's give-back (release is its kind's give_back): the highest fence it may
    // take back, passed as the last ARGV.
    std::string fence_at_most;
    // The keys whose keyspace events the client listens for (RedisStore::watch), while on is
    // set; shared by copies, so they are given up once.
    struct Watch {
        std::atomic<bool> on{true};
        std::vector<std::string> keys;
    };
    std::shared_ptr<Watch> watching;

    /// What token holds under spec (or may hold after a lost reply).
    static std::shared_ptr<RedisHolding> held(std::shared_ptr<const RedisSpec> spec,
                                              std::string token, std::chrono::milliseconds px);
    /// The same for a spec not kept elsewhere: a copy of it is kept.
    static std::shared_ptr<RedisHolding> held(const RedisSpec& spec, std::string token,
                                              std::chrono::milliseconds px);
    /// token's place as a waiter under spec, which a waiter that gives up drops.
    static std::shared_ptr<RedisHolding> waiting(std::shared_ptr<const RedisSpec> spec,
                                                 std::string token, std::chrono::milliseconds px);

    /// KEYS of its kind's scripts (a waiter's: the abandon's).
    const std::vector<std::string>& keys() const {
        return waiter ? spec->abandon_keys : spec->op_keys;
    }
    /// KEYS of extend and check (RedisSpec::lease_keys).
    const std::vector<std::string>& lease_keys() const {
        return spec->lease_keys.empty() ? spec->op_keys : spec->lease_keys;
    }
    /// ARGV after {token, channel, px}.
    const std::vector<std::string>& args() const { return waiter ? own_args : spec->op_args; }

    /// A call of script for it, ARGV {token, channel, px_s, args...}; px_s must outlive it.
    ScriptCall call(const Script& script, const std::string& px_s) const;
    /// The same for its kind's extend or check, whose KEYS leave the lines out.
    ScriptCall lease_call(const Script& script, const std::string& px_s) const;
    /// Makes its release its kind's give_back, which takes back only a holding whose fence is
    /// at most fence (a fixed owner's: a later holding of the same owner has a higher one).
    void release_up_to(std::uint64_t fence) {
        release = kind->give_back;
        fence_at_most = std::to_string(fence);
    }
    /// The keys whose loss is the holding's: the name's key (each name's, for a MultiLock), or
    /// the readers' set for a reader.
    std::vector<std::string_view> main_keys() const;
};

}  // namespace deadbolt::detail
