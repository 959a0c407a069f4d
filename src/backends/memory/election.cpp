// LeaderElection in a memory space: the term is a leader-shaped holding (claim.cpp) with the
// leader's value beside it; observers sleep until the space changes or the term's end comes.
#include "backends/memory/store.hpp"

namespace deadbolt::detail {
namespace {

Leader leader_of(MemState& st, const std::string& key, Clock::time_point now,
                 Clock::time_point* ends = nullptr) {
    Leader out;
    MemLock* l = st.lock(key, now);
    if (l == nullptr || !l->held() || l->shape != Shape::leader) return out;
    const MemHold& h = l->holders.front();
    out.elected = true;
    out.value = l->value;
    out.term = h.fence;
    out.ttl = std::chrono::ceil<std::chrono::milliseconds>(h.until - now);
    if (ends != nullptr) *ends = h.until;
    return out;
}

}  // namespace

Status MemoryStore::proclaim(const std::string& name, const std::string& token,
                             std::string_view value, bool& ours) {
    ours = false;
    return call([&](MemorySpace::Turn& t) {
        MemLock* l = t.state().lock(key(name), t.now());
        if (l != nullptr && l->shape == Shape::leader && l->holder(token) != nullptr) {
            ours = true;
            l->value = std::string(value);
            t.changed();
        }
        return Status{};
    });
}

Status MemoryStore::leader(const std::string& name, Leader& out) {
    return call([&](MemorySpace::Turn& t) {
        out = leader_of(t.state(), key(name), t.now());
        return Status{};
    });
}

Leader MemoryStore::observe(const std::string& name, const Leader& seen,
                            const AcquireOptions& how) {
    Leader now;
    watch(how, [&](MemorySpace::Turn& t, Clock::time_point& wake_at) {
        auto ends = Clock::time_point::max();
        now = leader_of(t.state(), key(name), t.now(), &ends);
        if (ends != Clock::time_point::max()) wake_at = std::min(wake_at, steady(t, ends));
        return !now.same_as(seen);
    });
    return now;
}

}  // namespace deadbolt::detail
