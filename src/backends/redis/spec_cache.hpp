// SpecCache: the Mutex specs a client built lately. Taking a name again then builds none of its
// keys, which was a seventh of an uncontended blocking cycle's instructions (callgrind).
#pragma once

#include <array>
#include <chrono>
#include <memory>
#include <mutex>
#include <string_view>

#include "backends/redis/specs.hpp"

namespace deadbolt::detail {

class SpecCache {
  public:
    /// The Mutex spec of name with these TTLs, if one is cached; else null.
    std::shared_ptr<const RedisSpec> find(std::string_view name, std::chrono::milliseconds ttl,
                                          std::chrono::milliseconds waiter_ttl);
    /// Caches spec (a Mutex's, as mutex_spec made it), in place of one of another name that
    /// hashes alike: a client of many names keeps the last of each few.
    void keep(std::shared_ptr<const RedisSpec> spec);

  private:
    // Direct-mapped, each slot under its own lock: threads taking different names rarely meet.
    struct Slot {
        std::mutex m;
        std::shared_ptr<const RedisSpec> spec;
    };
    Slot& slot(std::string_view name);
    std::array<Slot, 64> slots_;
};

}  // namespace deadbolt::detail
