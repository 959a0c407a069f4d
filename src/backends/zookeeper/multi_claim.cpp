#include "backends/zookeeper/multi_claim.hpp"

#include <algorithm>
#include <numeric>

namespace deadbolt::detail {

ZkMultiClaim::ZkMultiClaim(ZkStore& store, const LockSpec& spec, const std::stop_token& cancel)
    : store_(store), ttl_(spec.options.ttl) {
    name_of_part_.resize(spec.names.size());
    std::iota(name_of_part_.begin(), name_of_part_.end(), std::size_t{0});
    std::ranges::sort(name_of_part_, {}, [&](std::size_t i) { return spec.names[i]; });
    for (auto i : name_of_part_)
        parts_.push_back(std::make_unique<ZkClaim>(
            store, spec_of(Shape::exclusive, spec.names[i], spec.options), cancel));
    traits_.abandons = true;        // the names held so far, and our place in line, go
    traits_.expiry_wakes = true;    // a holder's session expiry deletes its node: watched
    traits_.strays_live_on = true;  // a stray node lives while our session does
}

void ZkMultiClaim::attempt(const std::string& token, std::chrono::milliseconds keep, Attempted& a,
                           Fences& f) {
    Progress& p = by_token_[token];
    std::shared_ptr<ZkSession> now;
    if (a.status = store_.session_for(ttl_, now); !a.status.ok()) return;
    if (p.session != now) p = {now, 0, std::vector<std::uint64_t>(parts_.size())};
    for (; p.held < parts_.size(); ++p.held) {
        Attempted one;
        Fences fenced;
        parts_[p.held]->attempt(token, keep, one, fenced);
        if (!one.status.ok() || !one.acquired) {
            waiting_on_ = p.held;
            a.status = std::move(one.status);
            a.pttl = one.pttl;
            // The core arms once per acquisition: the wake-up moves with the name waited for.
            if (a.status.ok() && armed_ && *armed_ != waiting_on_)
                a.status = arm(store_.deadline());
            return;
        }
        p.fences[p.held] = fenced.fence;
    }
    a.acquired = true;
    f.each.assign(parts_.size(), 0);
    for (std::size_t k = 0; k < parts_.size(); ++k) f.each[name_of_part_[k]] = p.fences[k];
    f.fence = f.each.front();
}

Status ZkMultiClaim::arm(Clock::time_point until) {
    if (armed_) parts_[*armed_]->disarm();
    armed_ = waiting_on_;
    return parts_[waiting_on_]->arm(until);
}

void ZkMultiClaim::disarm() noexcept {
    for (auto& part : parts_) part->disarm();
    armed_.reset();
}

std::shared_ptr<Holding> ZkMultiClaim::holding(const std::string& token,
                                               std::chrono::milliseconds keep,
                                               std::uint64_t /*fence*/) const {
    auto all = std::make_shared<ZkHolding>();
    for (const auto& part : parts_)
        all->parts.push_back(std::static_pointer_cast<ZkHolding>(part->holding(token, keep, 0)));
    return all;
}

}  // namespace deadbolt::detail
