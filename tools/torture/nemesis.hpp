// Nemeses: the faults a torture run injects while workers contend, and what deadbolt still
// promises under each (stated here once; the report and the exit code follow it).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "lock_side.hpp"
#include "promise.hpp"
#include "steered_clock.hpp"

namespace deadbolt::torture {

/// Every single nemesis, in table order. "mixed" (not listed) picks one of them per fault.
const std::vector<std::string>& nemesis_kinds();
bool known_nemesis(const std::string& kind);
/// The nemeses that fit a consensus engine, etcd or ZooKeeper (also "mixed"'s pool there).
const std::vector<std::string>& etcd_nemeses();
/// The nemeses that can hit lock's setup ("all" runs these), and whether one of them fits.
std::vector<std::string> nemeses_for(const std::string& lock);
bool nemesis_fits(const std::string& lock, const std::string& nemesis);
/// What the lock side needs for this nemesis: an AOF, a standby replica.
bool needs_aof(const std::string& kind);
bool needs_standby(const std::string& kind);

/// What `lock` promises under `nemesis`. deadbolt keeps exclusion unless the lock's state is
/// lost or its expiry runs early (restart without persistence, failover to an async replica,
/// a server clock that jumps or runs fast; on a database, a connection that ends: a killed
/// holder's, a cut one's, or any at a restart), and keeps fences increasing under all of them,
/// because a fence is floored by the server's time, which these nemeses never move back.
Promise promised(const std::string& lock, const std::string& nemesis);

/// What a nemesis may touch.
struct Targets {
    LockSide& side;
    std::vector<pid_t>& pids;                            // worker processes by id
    std::vector<std::unique_ptr<SteeredClock>>& clocks;  // their lease clocks
    std::function<pid_t(int)> respawn;                   // starts worker i again
    std::function<std::vector<int>()> holders;           // workers holding the lock right now
    std::chrono::milliseconds ttl;
    std::mt19937& rng;
};

/// Injects one fault of `kind` and returns the name of what it did (for mixed, the kind it
/// picked), or "" when it had nothing to hit (no holder at the moment).
std::string inject(const std::string& kind, Targets& t);

}  // namespace deadbolt::torture
