#include "core/grant.hpp"

#include "core/backoff.hpp"
#include "core/client_impl.hpp"
#include "core/events.hpp"
#include "core/validity.hpp"

namespace deadbolt::detail {

Status validated(const LockSpec& spec) {
    Status st = spec.shape == Shape::multi ? validate_names(spec.names) : validate_name(spec.name);
    if (st.ok()) st = validate_options(spec.options);
    return st;
}

Status admissible(const Store& store, const LockSpec& spec) {
    Status st = validated(spec);
    if (st.ok()) st = store.supports(spec);
    return st;
}

const LockSpec& fitted(const Store& store, const LockSpec& asked, std::optional<LockSpec>& cut) {
    auto longest = store.longest_ttl();
    if (asked.options.ttl <= longest) return asked;
    cut.emplace(asked);
    cut->options.ttl = longest;
    if (cut->options.renew_every >= longest) cut->options.renew_every = {};  // ttl / 3 then
    return *cut;
}

AcquireRules rules_for(ClientImpl& c, const LockSpec& spec, const Claim& claim,
                       const AcquireOptions& how, std::chrono::milliseconds px) {
    const ClaimTraits& t = claim.traits();
    return AcquireRules{.name = spec.name,
                        .ttl = spec.options.ttl,
                        .px = px,
                        .strays_live_on = t.strays_live_on,
                        .deadline = how.deadline,
                        .refresh = t.refresh,
                        .wait_jitter = spec.options.wait_jitter,
                        .fixed_owner = !spec.owner.empty(),
                        .abandons = t.abandons,
                        .waiter_names_token = t.waiter_names_token,
                        .wakes_by_token = t.wakes_by_token,
                        .can_sleep_instead = t.can_sleep_instead,
                        .yield_until = c.handoffs.yield_until(text_of(t.handoff_key)),
                        // A holder's expiry is announced like a release: no timed look.
                        .no_expiry_recheck = t.expiry_wakes ? std::chrono::milliseconds(0)
                                                            : AcquireRules{}.no_expiry_recheck,
                        .seed = random_seed()};
}

std::shared_ptr<LeaseState> make_state(const std::shared_ptr<ClientImpl>& client,
                                       const LockSpec& spec, const Claim& claim, std::string token,
                                       Fences fences, std::chrono::milliseconds px,
                                       Clock::time_point sent_at, Clock::time_point valid_until,
                                       bool in_local_queue) {
    auto s = std::make_shared<LeaseState>();
    const ClaimTraits& t = claim.traits();
    s->client = client;
    s->name = spec.name;
    s->primitive = primitive_of(spec.shape);
    s->holding = claim.holding(token, px, fences.fence);
    s->handoff_key = t.handoff_key;
    s->hands_off = t.hands_off;
    if (in_local_queue && !text_of(t.local_line).empty()) s->local_line = t.local_line;
    s->left_queue = s->local_line == nullptr;
    s->token = std::move(token);
    s->fence = fences.fence;
    s->fences = std::move(fences.each);
    s->names = spec.names;
    s->options = spec.options;
    s->px = px;
    s->acquired_at = sent_at;
    s->set_valid_until(valid_until);
    if (spec.shape == Shape::reentrant) s->owner = spec.owner;
    s->owner_only_here = spec.owner_only_here;
    return s;
}

void tell_attempt(const ClientImpl& c, const LockSpec& spec, const Attempted& a,
                  Clock::time_point started, std::uint32_t& refusals) {
    if (a.status.ec == make_error_code(errc::unknown_outcome)) {
        tell_acquire(c, spec, LockEventKind::unknown_outcome, a, started, refusals, a.status.ec);
    } else if (a.status.ok() && !a.acquired) {
        ++refusals;
        tell_acquire(c, spec, LockEventKind::refused, a, started, refusals);
    }
}

void tell_acquire(const ClientImpl& c, const LockSpec& spec, LockEventKind kind, const Attempted& a,
                  Clock::time_point started, std::uint32_t refusals, std::error_code error,
                  std::uint64_t fence) {
    if (!c.options.observer) return;
    tell(c.options.observer,
         LockEvent{.kind = kind,
                   .name = spec.name,
                   .primitive = primitive_of(spec.shape),
                   .took = micros(a.replied_at - a.sent_at),
                   .waited = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() -
                                                                                   started),
                   .fence = fence,
                   .error = error,
                   .refusals = refusals});
}

}  // namespace deadbolt::detail
