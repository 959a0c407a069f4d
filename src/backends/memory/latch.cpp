// CountDownLatch in a memory space: a count that opens (and is gone) at zero or at its TTL; waiters
// sleep until the space changes or the latch's end comes.
#include <algorithm>

#include "backends/memory/store.hpp"

namespace deadbolt::detail {
namespace {

MemLatch* live(MemState& st, const std::string& key, Clock::time_point now) {
    auto it = st.latches.find(key);
    if (it == st.latches.end()) return nullptr;
    if (it->second.until <= now) {
        st.latches.erase(it);
        return nullptr;
    }
    return &it->second;
}

}  // namespace

Status MemoryStore::latch_set(const std::string& name, std::int64_t count,
                              std::chrono::milliseconds ttl, bool& set) {
    return call([&](MemorySpace::Turn& t) {
        set = live(t.state(), key(name), t.now()) == nullptr;
        if (set) t.state().latches[key(name)] = MemLatch{count, t.now() + ttl};
        return Status{};
    });
}

Status MemoryStore::latch_count_down(const std::string& name, bool& opened) {
    opened = false;
    return call([&](MemorySpace::Turn& t) {
        MemLatch* l = live(t.state(), key(name), t.now());
        if (l != nullptr && --l->count <= 0) {  // open: gone, as Redisson's key is
            t.state().latches.erase(key(name));
            opened = true;
            t.changed();
        }
        return Status{};
    });
}

Status MemoryStore::latch_count(const std::string& name, std::int64_t& count) {
    return call([&](MemorySpace::Turn& t) {
        MemLatch* l = live(t.state(), key(name), t.now());
        count = l == nullptr ? 0 : l->count;
        return Status{};
    });
}

bool MemoryStore::latch_wait(const std::string& name, const AcquireOptions& how) {
    return watch(how, [&](MemorySpace::Turn& t, Clock::time_point& wake_at) {
        MemLatch* l = live(t.state(), key(name), t.now());
        if (l != nullptr) wake_at = std::min(wake_at, steady(t, l->until));  // its end opens it
        return l == nullptr || l->count == 0;
    });
}

}  // namespace deadbolt::detail
