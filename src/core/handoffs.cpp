#include "core/handoffs.hpp"

#include <iterator>

namespace deadbolt::detail {

void Handoffs::note(const std::string& key, Clock::time_point until) {
    std::lock_guard lk(m_);
    if (until_.size() >= 1024) {  // bounded: forget the stale ones before growing further
        auto now = Clock::now();
        std::erase_if(until_, [now](const auto& e) { return e.second <= now; });
    }
    until_[key] = until;
    if (until.time_since_epoch().count() > latest_.load(std::memory_order_relaxed))
        latest_.store(until.time_since_epoch().count(), std::memory_order_release);
}

std::optional<Handoffs::Clock::time_point> Handoffs::yield_until(const std::string& key) {
    if (Clock::now().time_since_epoch().count() >= latest_.load(std::memory_order_acquire))
        return std::nullopt;  // every handoff noted is stale: nothing to yield to
    std::lock_guard lk(m_);
    auto it = until_.find(key);
    if (it == until_.end()) return std::nullopt;
    auto until = it->second;
    until_.erase(it);  // one yield per handoff
    if (until <= Clock::now()) return std::nullopt;
    return until;
}

}  // namespace deadbolt::detail
