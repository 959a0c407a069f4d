// What a client sees of a memory space's locks without holding them (status, list) and what an
// operator does (force-unlock: its holders hear of the loss at once, as lose() makes them).
#include <algorithm>

#include "backends/memory/store.hpp"
#include "core/name_pattern.hpp"
#include "core/token.hpp"

namespace deadbolt::detail {
namespace {

const char* kind_of(const MemLock* l) {
    if (l == nullptr || !l->held()) return "free";
    switch (l->shape) {
        case Shape::read:
            return "readers";
        case Shape::reentrant:
            return "reentrant";
        case Shape::permits:
            return "semaphore";
        case Shape::leader:
            return "leader";
        default:
            return "mutex";
    }
}

LockStatus status_of(const MemLock* l, std::uint64_t last_fence, Clock::time_point now) {
    LockStatus s;
    s.kind = kind_of(l);
    s.last_fence = last_fence;
    if (l == nullptr) return s;
    s.waiters = static_cast<int>(l->line.size()) + (l->writer ? 1 : 0);
    s.writer_waiting = l->writer.has_value();
    if (!l->held()) return s;
    s.held = true;
    s.holders = static_cast<int>(l->holders.size());
    if (l->shape == Shape::permits) s.permits = l->permits;
    if (l->shape == Shape::leader) s.value = l->value;
    std::vector<const MemHold*> by_end;
    for (const auto& h : l->holders) by_end.push_back(&h);
    std::sort(by_end.begin(), by_end.end(),
              [](const MemHold* a, const MemHold* b) { return a->until > b->until; });
    s.ttl = std::chrono::ceil<std::chrono::milliseconds>(by_end.front()->until - now);
    for (const MemHold* h : by_end) {
        if (s.held_by.size() >= static_cast<std::size_t>(kMaxListedHolders)) break;
        Holder who;
        if (auto o = token_origin(h->token)) {
            who.host = o->host;
            who.pid = o->pid;
        }
        if (h->fence != 0) who.since = h->since;
        who.ttl = std::chrono::ceil<std::chrono::milliseconds>(h->until - now);
        s.held_by.push_back(std::move(who));
    }
    return s;
}

}  // namespace

Status MemoryStore::statuses(const std::vector<std::string>& names,
                             std::vector<std::pair<LockStatus, Status>>& out) {
    return call([&](MemorySpace::Turn& t) {
        out.clear();
        for (const auto& n : names) {
            const std::string k = key(n);
            auto f = t.state().fences.find(k);
            out.emplace_back(status_of(t.state().lock(k, t.now()),
                                       f == t.state().fences.end() ? 0 : f->second, t.now()),
                             Status{});
        }
        return Status{};
    });
}

Status MemoryStore::lock_names(std::string_view pattern, std::vector<std::string>& names) {
    const std::string& prefix = client_.options.key_prefix;
    return call([&](MemorySpace::Turn& t) {
        names.clear();
        std::vector<std::string> keys;
        for (const auto& [k, l] : t.state().locks) keys.push_back(k);
        for (const auto& k : keys) {
            const MemLock* l = t.state().lock(k, t.now());
            if (l == nullptr || !l->held() || !k.starts_with(prefix)) continue;
            std::string name = k.substr(prefix.size());
            if (name_matches(pattern, name)) names.push_back(std::move(name));
        }
        return Status{};
    });
}

Status MemoryStore::force_unlock(const std::string& name, std::string& kind) {
    Status st = call([&](MemorySpace::Turn& t) {
        MemLock* l = t.state().lock(key(name), t.now());
        kind = kind_of(l);
        if (l != nullptr && l->held()) {
            l->holders.clear();
            t.changed();
        }
        return Status{};
    });
    if (st.ok() && kind != "free") space_->doubt_all();
    return st;
}

}  // namespace deadbolt::detail
