#include "core/spare_claim.hpp"

#include "core/grant.hpp"
#include "core/store.hpp"

namespace deadbolt::detail {

SpareClaim::SpareClaim(LockSpec spec) : spec_(std::move(spec)), valid_(validated(spec_)) {}

SpareClaim::~SpareClaim() {
    delete spare_.exchange(nullptr);
}

std::unique_ptr<Claim> SpareClaim::take(Store& store, const LockSpec& spec,
                                        std::stop_token cancel) {
    std::unique_ptr<Claim> c(spare_.exchange(nullptr, std::memory_order_acquire));
    if (!c) return store.open(spec, std::move(cancel));
    c->reopen(cancel);
    return c;
}

void SpareClaim::keep(std::unique_ptr<Claim> c) noexcept {
    if (!c || !c->recycle()) return;
    Claim* none = nullptr;
    if (spare_.compare_exchange_strong(none, c.get(), std::memory_order_release)) (void)c.release();
}

}  // namespace deadbolt::detail
