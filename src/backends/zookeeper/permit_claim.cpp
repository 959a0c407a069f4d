#include "backends/zookeeper/permit_claim.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "backends/zookeeper/paths.hpp"

namespace deadbolt::detail {

ZkPermitClaim::ZkPermitClaim(ZkStore& store, const LockSpec& spec, std::stop_token cancel)
    : store_(store), spec_(spec), cancel_(std::move(cancel)) {
    leases_ = ZkStore::leases_of(spec.name);  // supports() refused names it cannot place
    gate_ = std::make_unique<ZkClaim>(
        store, spec_of(Shape::exclusive, fmt::format("{}/{}", spec.name, kGate), spec.options),
        cancel_);
    traits_.abandons = true;        // our lease and our place at the gate go when we give up
    traits_.expiry_wakes = true;    // a holder's session expiry deletes its lease: watched
    traits_.strays_live_on = true;  // a stray node lives while our session does
}

ZkPermitClaim::~ZkPermitClaim() {
    disarm();
}

void ZkPermitClaim::attempt(const std::string& token, std::chrono::milliseconds keep, Attempted& a,
                            Fences& f) {
    Lease& l = by_token_[token];
    if (l.session && l.session->expired()) l = {};  // its nodes went with the session
    if (!l.sent) {  // the gate first: only its holder may add a lease
        gate_->attempt(token, keep, a, f);
        at_gate_ = true;
        if (!a.status.ok() || !a.acquired) {
            if (armed_ && a.status.ok()) a.status = follow(store_.deadline());
            return;
        }
        a.acquired = false;
        f = {};
    }
    a.status = count(l, token, a, f, store_.deadline());
    // The core arms once per acquisition: the wake-up follows the refusal.
    if (armed_ && a.status.ok() && !a.acquired) a.status = follow(store_.deadline());
}

Status ZkPermitClaim::count(Lease& l, const std::string& token, Attempted& a, Fences& f,
                            Clock::time_point by) {
    if (!l.session) {
        // On the gate's session (a lease outlives no gate it passed) and with its guid, so
        // that `status` tells the lease of the gate's holder, which waits, from those held.
        auto gate = std::static_pointer_cast<ZkHolding>(gate_->holding(token, {}, 0));
        l.session = gate->session;
        l.guid = gate->guid.empty() ? new_guid() : gate->guid;
        if (!l.session)
            if (Status st = store_.session_for(spec_.options.ttl, l.session); !st.ok()) return st;
    }
    ZkSession& s = *l.session;
    for (int round = 0; round < 3; ++round) {
        std::optional<ZkReply> listed;
        // Our token is the permit's id (PermitExpirableSemaphore releases by it) and names our
        // host and process for `status`, as our session's timeout says how long our crash
        // would keep the permit.
        if (l.node.empty())
            if (Status st = store_.put_in_line(l, leases_, contender_prefix(l.guid, Queues::lease),
                                               holder_data(token, l.session->timeout()),
                                               fmt::format("taking a permit of '{}'", spec_.name),
                                               by, listed);
                !st.ok())
                return st;
        if (!listed) listed = s.children(leases_, by);
        if (!listed->ok())
            return s.fail(*listed, fmt::format("counting the permits of '{}'", spec_.name), false);
        const auto& kids = listed->children;
        auto mine = l.node.substr(leases_.size() + 1);
        if (std::find(kids.begin(), kids.end(), mine) == kids.end()) {
            l.node.clear();  // deleted from outside: a lease of our own again
            l.sent = false;
            continue;
        }
        // Curator counts every child of "leases", its waiting one included.
        if (kids.size() > static_cast<std::size_t>(spec_.permits)) {
            at_gate_ = false;
            counted_on_ = l.session;
            a.pttl = std::chrono::milliseconds(-1);  // a lease's end is announced by its deletion
            return {};
        }
        if (!l.gate_gone) {  // the next waiter's turn at the gate
            auto gate = gate_->holding(token, std::chrono::milliseconds(0), 0);
            const Holding* one = gate.get();
            auto v = store_.release({&one, 1}, by).front();
            if (v.is == Verdict::Is::unknown) return v.status;  // our cleanup deletes it
            l.gate_gone = true;
        }
        a.acquired = true;
        store_.watch_own(l);
        // A permit that excludes every other holder is fenced like a lock (ARCHITECTURE 15).
        f.fence = spec_.permits == 1 ? static_cast<std::uint64_t>(l.czxid) : 0;
        return {};
    }
    a.pttl = std::chrono::milliseconds(0);  // our lease keeps vanishing: look again soon
    return {};
}

Status ZkPermitClaim::arm(Clock::time_point until) {
    disarm();
    armed_ = true;
    return follow(std::min(until, store_.deadline()));
}

Status ZkPermitClaim::follow(Clock::time_point by) {
    if (at_gate_) {
        watch_.drop();
        if (gate_armed_) return {};
        gate_armed_ = true;
        return gate_->arm(by);
    }
    if (gate_armed_) gate_->disarm();
    gate_armed_ = false;
    if (watch_.set() && !wake_->fired()) return {};
    watch_.drop();
    wake_->reset();
    if (!counted_on_) {
        wake_->fire();
        return {};
    }
    watch_.session = counted_on_;
    auto r = counted_on_->watch_children(
        leases_, by, [w = wake_] { w->fire(); }, watch_.id);
    if (!r.ok())
        return counted_on_->fail(r, fmt::format("watching the permits of '{}'", spec_.name), false);
    // A lease that went between the count and the watch: count again at once.
    if (r.children.size() <= static_cast<std::size_t>(spec_.permits)) wake_->fire();
    return {};
}

void ZkPermitClaim::disarm() noexcept {
    armed_ = false;
    gate_->disarm();
    gate_armed_ = false;
    watch_.drop();
}

void ZkPermitClaim::wait(Clock::time_point until) {
    if (at_gate_) return gate_->wait(until);
    wake_->wait(until, cancel_);
}

std::shared_ptr<Holding> ZkPermitClaim::holding(const std::string& token,
                                                std::chrono::milliseconds keep,
                                                std::uint64_t /*fence*/) const {
    auto it = by_token_.find(token);
    auto lease = holding_of(it != by_token_.end() ? it->second : Lease{}, leases_);
    if (it != by_token_.end() && it->second.gate_gone) return lease;
    // Not granted yet: our place at the gate goes with it.
    auto both = std::make_shared<ZkHolding>();
    both->parts = {lease, std::static_pointer_cast<ZkHolding>(gate_->holding(token, keep, 0))};
    return both;
}

}  // namespace deadbolt::detail
