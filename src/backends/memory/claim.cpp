#include "backends/memory/claim.hpp"

#include <algorithm>
#include <chrono>

#include "backends/memory/holding.hpp"

namespace deadbolt::detail {
MemoryClaim::MemoryClaim(MemoryStore& store, const LockSpec& spec, std::stop_token cancel)
    : store_(store), spec_(spec), cancel_(std::move(cancel)) {
    if (spec.shape == Shape::multi)
        for (const auto& n : spec.names) keys_.push_back(store.key(n));
    else
        keys_.push_back(store.key(spec.name));
    // A FairMutex's place and a writer's claim stay while the waiter looks again within their
    // time: a waiter that died leaves them to expire, as on the real engines.
    traits_.abandons = spec.shape == Shape::fair || spec.shape == Shape::write;
    if (traits_.abandons)
        traits_.refresh = std::max(std::chrono::milliseconds(1),
                                   (spec.options.ttl + spec.options.lock_delay) / 3);
}

void MemoryClaim::attempt(const std::string& token, std::chrono::milliseconds keep, Attempted& a,
                          Fences& f) {
    MemorySpace::Turn t(store_.space(), store_.deadline(), memory::Call::acquire);
    if (a.status = t.status(); !a.status.ok()) return;
    decide(t, token, keep, a, f);
    seen_ = t.generation();
    looked_ = true;
    if (a.status = t.answer(); !a.status.ok()) {  // done, but the caller does not learn it
        a.acquired = false;
        f = {};
    }
}

void MemoryClaim::decide(MemorySpace::Turn& t, const std::string& token,
                         std::chrono::milliseconds keep, Attempted& a, Fences& f) {
    MemState& st = t.state();
    const auto now = t.now();
    const auto until = now + keep;
    const Shape shape = spec_.shape;
    // Who is in the way, name by name: its lock (null: free).
    for (const auto& key : keys_) {
        MemLock* l = st.lock(key, now);
        if (l == nullptr) continue;
        bool taken = false;
        switch (shape) {
            case Shape::read:
                taken = (l->held() && l->shape != Shape::read) ||
                        (l->writer && l->writer->token != token);
                break;
            case Shape::permits:
                taken = l->held() && (l->shape != Shape::permits ||
                                      static_cast<int>(l->holders.size()) >= spec_.permits);
                break;
            case Shape::reentrant:
                taken = l->held() && (l->shape != Shape::reentrant || !l->holder(token));
                break;
            case Shape::fair:
                taken = l->held() || (!l->line.empty() && l->line.front().token != token);
                break;
            default:
                taken = l->held();
        }
        if (!taken) continue;
        a.pttl = l->pttl(now);
        if (shape == Shape::write && (!l->writer || l->writer->token == token)) {
            l->writer = MemWaiter{token, until};  // new readers wait behind it
        } else if (shape == Shape::fair) {
            auto mine = std::find_if(l->line.begin(), l->line.end(),
                                     [&](const MemWaiter& w) { return w.token == token; });
            if (mine == l->line.end())
                l->line.push_back({token, until});
            else
                mine->until = until;
        }
        return;
    }
    const auto since = std::chrono::system_clock::now() + (now - Clock::now());
    for (const auto& key : keys_) {
        MemLock& l = st.locks[key];
        if (shape == Shape::reentrant) {
            if (MemHold* h = l.holder(token); h && !spec_.leftover_is_new) {
                ++h->holds;
                h->until = std::max(h->until, until);
                f.fence = h->fence;
                a.acquired = true;
                return;
            }
            l.holders.clear();  // a leftover of this owner's: this grant starts anew
        }
        // Free, or shared: nobody else holds it but readers or permits (and, for a
        // reentrant owner, its leftover just dropped).
        const bool fenced = shape != Shape::read && shape != Shape::permits;
        MemHold h{token, fenced ? st.next_fence(key) : 0, until, since};
        l.holders.push_back(h);
        l.shape = shape;
        if (shape == Shape::permits) l.permits = spec_.permits;
        if (shape == Shape::leader) l.value = spec_.value;
        l.forget_waiter(token);
        if (fenced) f.each.push_back(h.fence);
    }
    if (!f.each.empty()) f.fence = *std::max_element(f.each.begin(), f.each.end());
    if (shape != Shape::multi) f.each.clear();
    a.acquired = true;
}

std::shared_ptr<Holding> MemoryClaim::holding(const std::string& token,
                                              std::chrono::milliseconds /*keep*/,
                                              std::uint64_t fence) const {
    auto h = std::make_shared<MemHolding>();
    h->keys = keys_;
    h->token = token;
    h->shape = spec_.shape;
    if (spec_.shape == Shape::reentrant) h->fence = fence;  // its release spares the next
    return h;
}

std::shared_ptr<Holding> MemoryClaim::waiter(const std::string& token,
                                             std::chrono::milliseconds keep) const {
    if (!traits_.abandons) return nullptr;
    auto h = std::static_pointer_cast<MemHolding>(holding(token, keep, 0));
    h->waiter = true;
    return h;
}

Status MemoryClaim::arm(Clock::time_point /*until*/) {
    if (!looked_) {
        seen_ = store_.space().generation();
        looked_ = true;
    }
    return {};
}

void MemoryClaim::wait(Clock::time_point until) {
    store_.space().wait_change(seen_, until, cancel_);
}

void MemoryClaim::async_wait(std::function<void()> woken) {
    cancel_wait();
    waker_ = store_.space().on_change(seen_, std::move(woken));
}

void MemoryClaim::cancel_wait() noexcept {
    if (waker_ != 0) store_.space().forget(waker_);
    waker_ = 0;
}

}  // namespace deadbolt::detail
