#include "backends/memory/space.hpp"

#include <fmt/format.h>

#include <vector>

namespace deadbolt::detail {
namespace {

std::mutex& registry_mutex() {
    static std::mutex m;
    return m;
}

// Spaces by name, kept while somebody uses them: a test's next space of a name starts empty.
std::map<std::string, std::weak_ptr<MemorySpace>>& registry() {
    static std::map<std::string, std::weak_ptr<MemorySpace>> spaces;
    return spaces;
}

}  // namespace

std::shared_ptr<MemorySpace> MemorySpace::named(const std::string& name) {
    std::lock_guard lk(registry_mutex());
    auto& all = registry();
    std::erase_if(all, [](const auto& e) { return e.second.expired(); });
    if (auto it = all.find(name); it != all.end())
        if (auto s = it->second.lock()) return s;
    auto s = std::make_shared<MemorySpace>(name);
    all[name] = s;
    return s;
}

MemorySpace::Turn::Turn(MemorySpace& s, Clock::time_point by, memory::Call kind)
    : space_(s), lock_(s.m_), kind_(kind) {
    if (!space_.cv_.wait_until(lock_, by, [&] { return !space_.stalled_; }))
        status_ = Status::error(
            errc::timeout, fmt::format("memory://{} is stalled (memory::Space::stall): the call "
                                       "was not carried out",
                                       space_.name_));
    now_ = space_.now();
}

MemorySpace::Turn::~Turn() {
    if (!changed_) return;
    ++space_.generation_;
    lock_.unlock();
    space_.wake();
}

Status MemorySpace::Turn::answer() {
    for (auto which : {kind_, memory::Call::any}) {
        auto it = space_.lost_replies_.find(which);
        if (it == space_.lost_replies_.end() || it->second <= 0) continue;
        if (--it->second == 0) space_.lost_replies_.erase(it);
        return Status::error(
            errc::unknown_outcome,
            fmt::format("memory://{} lost the reply (memory::Space::lose_replies): "
                        "the call was carried out",
                        space_.name_));
    }
    return {};
}

std::uint64_t MemorySpace::generation() const {
    std::lock_guard lk(m_);
    return generation_;
}

bool MemorySpace::wait_change(std::uint64_t seen, Clock::time_point until,
                              const std::stop_token& cancel) {
    std::unique_lock lk(m_);
    return cv_.wait_until(lk, cancel, until, [&] { return generation_ != seen; });
}

std::uint64_t MemorySpace::on_change(std::uint64_t seen, std::function<void()> woken) {
    {
        std::lock_guard lk(m_);
        if (generation_ == seen) {
            wakers_.emplace(++next_id_, std::make_pair(seen, std::move(woken)));
            return next_id_;
        }
    }
    woken();
    return 0;
}

void MemorySpace::forget(std::uint64_t id) noexcept {
    std::lock_guard lk(m_);
    wakers_.erase(id);
}

void MemorySpace::wake() noexcept {
    std::vector<std::function<void()>> due;
    {
        std::lock_guard lk(m_);
        for (auto it = wakers_.begin(); it != wakers_.end();) {
            if (it->second.first != generation_) {
                due.push_back(std::move(it->second.second));
                it = wakers_.erase(it);
            } else {
                ++it;
            }
        }
    }
    cv_.notify_all();
    for (auto& f : due) f();
}

std::uint64_t MemorySpace::add_doubter(std::function<void()> doubt) {
    std::lock_guard lk(doubters_m_);
    doubters_.emplace(++next_doubter_, std::move(doubt));
    return next_doubter_;
}

void MemorySpace::remove_doubter(std::uint64_t id) noexcept {
    std::lock_guard lk(doubters_m_);
    doubters_.erase(id);
}

void MemorySpace::doubt_all() noexcept {
    std::lock_guard lk(doubters_m_);
    for (auto& [id, doubt] : doubters_) doubt();
}

int MemorySpace::lose(const std::string& name) noexcept {
    int dropped = 0;
    {
        std::lock_guard lk(m_);
        auto it = state_.locks.find(name);
        if (it == state_.locks.end()) return 0;
        dropped = static_cast<int>(it->second.holders.size());
        it->second.holders.clear();
        ++generation_;
    }
    wake();
    doubt_all();
    return dropped;
}

int MemorySpace::lose_all() noexcept {
    int dropped = 0;
    {
        std::lock_guard lk(m_);
        for (auto& [name, l] : state_.locks) {
            dropped += static_cast<int>(l.holders.size());
            l.holders.clear();
        }
        ++generation_;
    }
    wake();
    doubt_all();
    return dropped;
}

void MemorySpace::lose_replies(int n, memory::Call which) noexcept {
    if (n <= 0) return;
    std::lock_guard lk(m_);
    lost_replies_[which] += n;
}

void MemorySpace::stall(bool on) noexcept {
    {
        std::lock_guard lk(m_);
        stalled_ = on;
    }
    cv_.notify_all();
}

void MemorySpace::advance(Clock::duration d) noexcept {
    {
        std::lock_guard lk(m_);
        offset_.fetch_add(d.count(), std::memory_order_acq_rel);
        ++generation_;  // what ended meanwhile frees its lock: waiters look again
    }
    wake();
    doubt_all();
}

std::optional<std::string> MemorySpace::value(const std::string& key) {
    std::lock_guard lk(m_);
    auto it = state_.values.find(key);
    if (it == state_.values.end()) return std::nullopt;
    return it->second;
}

}  // namespace deadbolt::detail
