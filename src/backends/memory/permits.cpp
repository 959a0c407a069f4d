// A semaphore's permits in a memory space, handled by id (the permit's token) from any client.
#include "backends/memory/store.hpp"

namespace deadbolt::detail {
namespace {

MemHold* permit(MemState& st, const std::string& key, std::string_view id, Clock::time_point now) {
    MemLock* l = st.lock(key, now);
    if (l == nullptr || l->shape != Shape::permits) return nullptr;
    return l->holder(std::string(id));
}

}  // namespace

Status MemoryStore::permit_release(const std::string& name, std::string_view id, bool& released) {
    released = false;
    return call([&](MemorySpace::Turn& t) {
        if (permit(t.state(), key(name), id, t.now()) != nullptr) {
            std::erase_if(t.state().locks[key(name)].holders,
                          [&](const MemHold& h) { return h.token == id; });
            released = true;
            t.changed();
        }
        return Status{};
    });
}

Status MemoryStore::permit_extend(const std::string& name, std::string_view id,
                                  std::chrono::milliseconds keep, bool& extended) {
    extended = false;
    return call([&](MemorySpace::Turn& t) {
        if (MemHold* h = permit(t.state(), key(name), id, t.now())) {
            h->until = t.now() + keep;
            extended = true;
        }
        return Status{};
    });
}

Status MemoryStore::permits_in_use(const std::string& name, int /*permits*/, int& in_use) {
    return call([&](MemorySpace::Turn& t) {
        MemLock* l = t.state().lock(key(name), t.now());
        in_use =
            l != nullptr && l->shape == Shape::permits ? static_cast<int>(l->holders.size()) : 0;
        return Status{};
    });
}

}  // namespace deadbolt::detail
