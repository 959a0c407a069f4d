#include "backends/memory/state.hpp"

#include <algorithm>

namespace deadbolt::detail {

void MemLock::prune(Clock::time_point now) {
    std::erase_if(holders, [&](const MemHold& h) { return h.until <= now; });
    std::erase_if(line, [&](const MemWaiter& w) { return w.until <= now; });
    if (writer && writer->until <= now) writer.reset();
}

MemHold* MemLock::holder(const std::string& token) {
    auto it = std::find_if(holders.begin(), holders.end(),
                           [&](const MemHold& h) { return h.token == token; });
    return it == holders.end() ? nullptr : &*it;
}

bool MemLock::waits(const std::string& token) const {
    return (writer && writer->token == token) ||
           std::any_of(line.begin(), line.end(),
                       [&](const MemWaiter& w) { return w.token == token; });
}

void MemLock::forget_waiter(const std::string& token) {
    if (writer && writer->token == token) writer.reset();
    std::erase_if(line, [&](const MemWaiter& w) { return w.token == token; });
}

std::chrono::milliseconds MemLock::pttl(Clock::time_point now) const {
    if (holders.empty()) return std::chrono::milliseconds(-1);
    auto first = holders.front().until;
    for (const auto& h : holders) first = std::min(first, h.until);
    // Rounded up: a waiter that looks again at the end must find it ended.
    return std::max(std::chrono::milliseconds(1),
                    std::chrono::ceil<std::chrono::milliseconds>(first - now));
}

MemLock* MemState::lock(const std::string& name, Clock::time_point now) {
    auto it = locks.find(name);
    if (it == locks.end()) return nullptr;
    it->second.prune(now);
    if (it->second.idle()) {
        locks.erase(it);
        return nullptr;
    }
    return &it->second;
}

}  // namespace deadbolt::detail
