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
    noted_.store(until_.size(), std::memory_order_release);
}

std::optional<Handoffs::Clock::time_point> Handoffs::yield_until(const std::string& key) {
    if (noted_.load(std::memory_order_acquire) == 0) return std::nullopt;
    std::lock_guard lk(m_);
    auto it = until_.find(key);
    if (it == until_.end()) return std::nullopt;
    auto until = it->second;
    until_.erase(it);  // one yield per handoff
    noted_.store(until_.size(), std::memory_order_release);
    if (until <= Clock::now()) return std::nullopt;
    return until;
}

}  // namespace deadbolt::detail
