#include "backends/redis/spec_cache.hpp"

#include <functional>

namespace deadbolt::detail {

SpecCache::Slot& SpecCache::slot(std::string_view name) {
    return slots_[std::hash<std::string_view>{}(name) % slots_.size()];
}

std::shared_ptr<const RedisSpec> SpecCache::find(std::string_view name,
                                                 std::chrono::milliseconds ttl,
                                                 std::chrono::milliseconds waiter_ttl) {
    Slot& s = slot(name);
    std::lock_guard lk(s.m);
    if (s.spec && s.spec->name == name && s.spec->ttl == ttl && s.spec->waiter_ttl == waiter_ttl)
        return s.spec;
    return nullptr;
}

void SpecCache::keep(std::shared_ptr<const RedisSpec> spec) {
    Slot& s = slot(spec->name);
    std::lock_guard lk(s.m);
    s.spec = std::move(spec);
}

}  // namespace deadbolt::detail
