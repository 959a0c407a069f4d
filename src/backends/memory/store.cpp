#include "backends/memory/store.hpp"

#include <algorithm>

#include "backends/memory/claim.hpp"
#include "backends/memory/holding.hpp"

namespace deadbolt::detail {
namespace {

const MemHolding& mem(const Holding* h) {
    return static_cast<const MemHolding&>(*h);
}

// The verdicts of a call whose Turn failed, or whose reply was lost after it was done.
std::vector<Verdict> unanswered(std::size_t n, const Status& why) {
    return std::vector<Verdict>(n, Verdict::unknown(why));
}

// Drops h from each of its names (a reentrant owner's one hold); whether it held them all.
bool drop(MemState& st, const MemHolding& h, Clock::time_point now) {
    bool whole = true;
    for (const auto& key : h.keys) {
        MemLock* l = st.lock(key, now);
        if (l == nullptr) {
            whole = false;
            continue;
        }
        if (h.waiter) {
            l->forget_waiter(h.token);
            continue;
        }
        MemHold* mine = l->holder(h.token);
        if (mine == nullptr || (h.fence != 0 && mine->fence != h.fence)) {
            whole = false;
            continue;
        }
        if (h.shape == Shape::reentrant && --mine->holds > 0) continue;
        std::erase_if(l->holders, [&](const MemHold& x) { return x.token == h.token; });
    }
    return whole;
}

}  // namespace

bool MemoryStore::holds(MemState& st, const MemHolding& h, Clock::time_point now) {
    for (const auto& key : h.keys) {
        MemLock* l = st.lock(key, now);
        if (l == nullptr || !(h.waiter ? l->waits(h.token) : l->holder(h.token) != nullptr))
            return false;
    }
    return true;
}

MemoryStore::MemoryStore(ClientImpl& c, std::shared_ptr<MemorySpace> space)
    : client_(c), space_(std::move(space)) {}

MemoryStore::~MemoryStore() {
    if (doubter_ != 0) space_->remove_doubter(doubter_);
}

std::unique_ptr<Claim> MemoryStore::open(const LockSpec& spec, std::stop_token cancel) {
    std::call_once(doubting_, [this] {
        // On the client's renewer thread: the test that drove the fault goes on at once, and
        // the renewer then also sees the renewals a moved clock made due.
        doubter_ = space_->add_doubter([this] {
            if (on_doubt_of) on_doubt_of(Concerns{});
        });
    });
    return std::make_unique<MemoryClaim>(*this, spec, std::move(cancel));
}

std::vector<Verdict> MemoryStore::extend(std::span<const Renewal> rs, Clock::time_point by) {
    MemorySpace::Turn t(*space_, by, memory::Call::renew);
    if (!t.status().ok()) return unanswered(rs.size(), t.status());
    std::vector<Verdict> out;
    for (const auto& r : rs) {
        const MemHolding& h = mem(r.holding);
        if (!holds(t.state(), h, t.now())) {
            out.push_back(Verdict::no());
            continue;
        }
        for (const auto& key : h.keys)
            t.state().lock(key, t.now())->holder(h.token)->until = t.now() + r.keep;
        out.push_back(Verdict::yes());
    }
    if (Status lost = t.answer(); !lost.ok()) return unanswered(rs.size(), lost);
    return out;
}

std::vector<Verdict> MemoryStore::release(std::span<const Holding* const> hs,
                                          Clock::time_point by) {
    MemorySpace::Turn t(*space_, by, memory::Call::release);
    if (!t.status().ok()) return unanswered(hs.size(), t.status());
    std::vector<Verdict> out;
    for (const Holding* h : hs) {
        out.push_back(drop(t.state(), mem(h), t.now()) ? Verdict::yes() : Verdict::no());
        t.changed();
    }
    if (Status lost = t.answer(); !lost.ok()) return unanswered(hs.size(), lost);
    return out;
}

std::vector<Verdict> MemoryStore::check(std::span<const Holding* const> hs, Clock::time_point by) {
    MemorySpace::Turn t(*space_, by, memory::Call::check);
    if (!t.status().ok()) return unanswered(hs.size(), t.status());
    std::vector<Verdict> out;
    for (const Holding* h : hs)
        out.push_back(holds(t.state(), mem(h), t.now()) ? Verdict::yes() : Verdict::no());
    if (Status lost = t.answer(); !lost.ok()) return unanswered(hs.size(), lost);
    return out;
}

}  // namespace deadbolt::detail
