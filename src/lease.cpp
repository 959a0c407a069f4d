#include "deadbolt/lease.hpp"

#include <fmt/format.h>

#include "core/client_impl.hpp"
#include "core/events.hpp"
#include "core/lease_state.hpp"
#include "core/validity.hpp"
#include "deadbolt/error.hpp"

namespace deadbolt {
namespace detail {

void LeaseState::leave_local_queue() noexcept {
    if (!left_queue.exchange(true) && local_line) client->local.leave(*local_line);
}

namespace {

// What a loss tells: the client's observer (e) and the lease's on_lost. Never throws.
void tell_lost(const LockObserver& observer, const LostHandler& on_lost,
               const LockEvent& e) noexcept {
    tell(observer, e);
    if (on_lost) {
        try {
            on_lost(std::string(e.name), e.error);
        } catch (...) {
            // A throwing callback must not take the renewer (or a destructor) down with it.
        }
    }
}

}  // namespace

LockEvent LeaseState::end_event(LockEventKind kind, std::error_code error) noexcept {
    auto held = client ? client->now() - acquired_at : Clock::duration{};
    return {.kind = kind,
            .name = name,
            .primitive = primitive,
            .error = error,
            .held = std::chrono::duration_cast<std::chrono::microseconds>(held),
            .ended = !ended.exchange(true)};
}

std::stop_token LeaseState::stop_token() {
    std::stop_source made{std::nostopstate};
    std::stop_token token;
    {
        std::lock_guard lk(stop_m);
        if (!stop.stop_possible()) {
            stop = std::stop_source();
            // Lost before it was made: mark_lost found none to request. lost is set before
            // mark_lost takes stop_m, so either it sees the source made here or this sees lost.
            if (lost) made = stop;
        }
        token = stop.get_token();
    }
    made.request_stop();  // outside stop_m: it runs the token's callbacks
    return token;
}

void LeaseState::mark_lost(std::error_code why) noexcept {
    if (lost.exchange(true)) return;
    std::stop_source made{std::nostopstate};
    {
        std::lock_guard lk(stop_m);
        made = stop;
    }
    made.request_stop();  // outside stop_m: it runs the token's callbacks
    leave_local_queue();
    tell_lost(client ? client->options.observer : LockObserver{}, options.on_lost,
              end_event(LockEventKind::lost, why));
}

Status LeaseState::release() noexcept {
    if (released.exchange(true)) return {};
    auto started = Clock::now();
    Verdict v;
    try {
        ClientImpl& c = *client;
        c.renewer->remove(this);
        v = c.store->release_one(*holding, c.store->deadline_for(options.ttl));
    } catch (const std::exception& ex) {
        v = Verdict::unknown(Status::error(errc::server_error, ex.what()));
    }
    return released_as(std::move(v), started);
}

Status LeaseState::released_as(Verdict v, Clock::time_point started) noexcept {
    Status st;
    try {
        ClientImpl& c = *client;
        if (v.is == Verdict::Is::yes && v.woke > 0 && hands_off &&
            options.handoff_grace.count() > 0)
            c.handoffs.note(text_of(handoff_key), Clock::now() + options.handoff_grace);
        // Not a re-entry's, while its owner may hold on: the release may have run, and run
        // again it would take the owner's other hold (that hold is then kept until the owner's
        // holdings stop renewing it and it expires: a wait for others, not a silent loss).
        const bool ask_again = v.is == Verdict::Is::unknown && is_retryable(v.status.ec) &&
                               !release_may_take_another();
        if (v.is == Verdict::Is::unknown) st = std::move(v.status);
        if (v.is == Verdict::Is::no) st = not_ours_at_release();
        // Not known to be done: the engine may still hold it for us, or may have lost it (a
        // restart, an ended session) before the release came. Release it again in the
        // background once the engine answers: waiters need not sit out the TTL, and a holding
        // found gone then was not ours up to the release, a loss that must not stay silent.
        if (ask_again) {
            auto settles = std::make_shared<Settlement>();
            // The lease is held weakly: it holds the client, whose renewer holds this, and a
            // cycle would keep the client and its threads alive past the user's last handle
            // (into the process's exit). A loss found after the handle is gone is still told.
            c.renewer->add_cleanup(
                holding, valid_until() + px,
                [weak = weak_from_this(), settles, observer = c.options.observer,
                 on_lost = options.on_lost, name = name, primitive = primitive,
                 told = lost.load()](Verdict::Is answer) {
                    auto self = weak.lock();
                    if (!self) {  // released already: this loss does not end the holding
                        // Unless it was told before the release (the renewer no longer
                        // watches a lease being released: nothing else tells it since).
                        if (answer == Verdict::Is::no && !told)
                            tell_lost(observer, on_lost,
                                      {.kind = LockEventKind::lost,
                                       .name = name,
                                       .primitive = primitive,
                                       .error = make_error_code(errc::not_owner)});
                        settles->settle_as({});  // nobody waits (a waiter holds the lease)
                        return;
                    }
                    Status outcome;
                    if (answer == Verdict::Is::no) {
                        self->mark_lost(make_error_code(errc::not_owner));
                        outcome = self->not_ours_at_release();
                    } else if (answer != Verdict::Is::yes) {
                        outcome = Status::error(errc::unknown_outcome,
                                                "no answer from the server before the lease "
                                                "would have expired");
                    }
                    self.reset();  // before the waiter wakes: see LeaseState::settlement
                    settles->settle_as(std::move(outcome));
                });
            // Only once the background has it: a cleanup that could not be added settles
            // below instead, and a waiter must not wait on this then. One that settled
            // already is seen as settled.
            {
                std::lock_guard lk(settlement.m);
                later = std::move(settles);
            }
            settlement.cv.notify_all();
        } else {
            settlement.settle_as(st);
        }
    } catch (const std::exception& ex) {
        st = Status::error(errc::server_error, ex.what());
        settlement.settle_as(st);
    }
    leave_local_queue();
    if (!client->options.observer) {  // nobody hears of it: its clock reads are spared
        ended.store(true);
        return st;
    }
    LockEvent e = end_event(LockEventKind::released, st.ec);
    e.took = micros(Clock::now() - started);
    tell(client->options.observer, e);
    return st;
}

bool LeaseState::release_may_take_another() const {
    if (owner.empty()) return false;
    if (!owner_only_here) return true;
    // ReentrantMutex counts a holding off before it releases it.
    return client->reentrant_holds(name, owner) > 0;
}

Status LeaseState::not_ours_at_release() const {
    // A permit or a shared holding has no fence (0): naming one would send the reader after
    // a fence that never was.
    return Status::error(
        errc::not_owner,
        fmt::format(
            "lock '{}' was no longer ours at release: it expired, was taken, or the "
            "server lost it{}",
            name,
            fence == 0 ? std::string() : fmt::format("; fence {} may have been overtaken", fence)));
}

void Settlement::settle_as(Status o) noexcept {
    {
        std::lock_guard lk(m);
        if (settled) return;
        settled = true;
        outcome = std::move(o);
    }
    cv.notify_all();
}

std::error_code Settlement::wait_until(Clock::time_point deadline) noexcept {
    std::unique_lock lk(m);
    if (!cv.wait_until(lk, deadline, [&] { return settled; }))
        return make_error_code(errc::unknown_outcome);
    return outcome.ec;
}

std::error_code LeaseState::settle(Clock::time_point deadline) noexcept {
    std::shared_ptr<Settlement> asked_again;
    {
        std::unique_lock lk(settlement.m);
        if (!released) return make_error_code(errc::invalid_argument);
        if (!settlement.cv.wait_until(lk, deadline,
                                      [&] { return settlement.settled || later != nullptr; }))
            return make_error_code(errc::unknown_outcome);
        if (settlement.settled) return settlement.outcome.ec;
        asked_again = later;
    }
    return asked_again->wait_until(deadline);
}

Status LeaseState::extend(std::chrono::milliseconds ttl) noexcept {
    if (Status st = validate_ttl(ttl, "extend ttl"); !st.ok()) return st;
    if (released) return Status::error(errc::not_owner, "the lease was released");
    try {
        ClientImpl& c = *client;
        auto sent_at = c.now();
        Renewal r{holding.get(), ttl + options.lock_delay};
        Verdict v = c.store->extend({&r, 1}, c.store->deadline_for(ttl)).front();
        // Not answered, or not confirmed by enough replicas: the old validity stands.
        if (v.is == Verdict::Is::unknown) return v.status;
        if (v.is == Verdict::Is::yes && c.store->late_yes_is_lost() && c.now() >= valid_until()) {
            mark_lost(make_error_code(errc::timeout));
            return Status::error(errc::not_owner,
                                 fmt::format("lock '{}': the majority confirmed the extension "
                                             "only after the lease's validity ended",
                                             name));
        }
        if (v.is == Verdict::Is::yes) {
            set_valid_until(validity_deadline(sent_at, ttl));
            return {};
        }
        mark_lost(make_error_code(errc::not_owner));
        return Status::error(errc::not_owner,
                             fmt::format("lock '{}' is no longer ours: cannot extend", name));
    } catch (const std::exception& ex) {
        return Status::error(errc::server_error, ex.what());
    }
}

Status LeaseState::is_current(bool& current) const noexcept {
    current = false;
    try {
        const Holding* h = holding.get();
        Verdict v = client->store->check({&h, 1}, client->store->deadline_for(options.ttl)).front();
        if (v.is == Verdict::Is::unknown) return v.status;
        current = v.is == Verdict::Is::yes;
        return {};
    } catch (const std::exception& ex) {
        return Status::error(errc::server_error, ex.what());
    }
}

Status LeaseState::put_if_current(std::string_view key, std::string_view value,
                                  bool& put) noexcept {
    put = false;
    if (key.empty()) return Status::error(errc::invalid_argument, "put_if_current: empty key");
    if (released) return Status::error(errc::not_owner, "the lease was released");
    try {
        Store& s = *client->store;
        HeldWrites* w = s.held_writes();
        if (w == nullptr) return s.refusal(HeldWrites::kWhat);
        Status st = w->put_if_held(*holding, key, value, s.deadline_for(options.ttl), put);
        if (st.ok() && !put) mark_lost(make_error_code(errc::not_owner));
        return st;
    } catch (const std::exception& ex) {
        return Status::error(errc::server_error, ex.what());
    }
}

Lease make_lease(std::shared_ptr<LeaseState> state) noexcept {
    return Lease(std::move(state));
}

std::shared_ptr<LeaseState> take_state(Lease& l) noexcept {
    return std::move(l.s_);
}

}  // namespace detail

namespace {
const std::string kEmpty;

detail::LeaseState& need(const std::shared_ptr<detail::LeaseState>& s) {
    if (!s) throw LockError(make_error_code(errc::not_owner), "empty Lease: nothing was acquired");
    return *s;
}
}  // namespace

Lease& Lease::operator=(Lease&& other) noexcept {
    if (this != &other) {
        if (s_)
            if (auto st = s_->release(); !st.ok()) s_->mark_lost(st.ec);
        s_ = std::move(other.s_);
    }
    return *this;
}

Lease::~Lease() {
    if (!s_) return;
    // Never throws; a failed release reaches the owner through on_lost / the stop token.
    if (auto st = s_->release(); !st.ok()) s_->mark_lost(st.ec);
}

const std::string& Lease::name() const {
    return s_ ? s_->name : kEmpty;
}
const std::string& Lease::token() const {
    return s_ ? s_->token : kEmpty;
}
std::uint64_t Lease::fence() const {
    return s_ ? s_->fence : 0;
}
std::vector<NamedFence> Lease::fences() const {
    if (!s_) return {};
    if (s_->names.empty()) return {{s_->name, s_->fence}};
    std::vector<NamedFence> out;
    for (std::size_t i = 0; i < s_->names.size() && i < s_->fences.size(); ++i)
        out.push_back({s_->names[i], s_->fences[i]});
    return out;
}
Lease::clock::time_point Lease::valid_until() const {
    return s_ ? s_->valid_until() : clock::time_point::min();
}
bool Lease::valid() const {
    return s_ && !s_->lost && !s_->released && s_->client->now() < s_->valid_until();
}
bool Lease::lost() const {
    return s_ && s_->lost;
}
bool Lease::held() const {
    return s_ && !s_->released;
}
std::stop_token Lease::stop_token() const {
    return s_ ? s_->stop_token() : std::stop_token{};
}

void Lease::extend(std::chrono::milliseconds ttl) {
    need(s_).extend(ttl).throw_if_error();
}

void Lease::extend(std::chrono::milliseconds ttl, std::error_code& ec) noexcept {
    ec = s_ ? s_->extend(ttl).ec : make_error_code(errc::not_owner);
}

bool Lease::is_current() const {
    bool current = false;
    need(s_).is_current(current).throw_if_error();
    return current;
}

bool Lease::is_current(std::error_code& ec) const noexcept {
    bool current = false;
    ec = s_ ? s_->is_current(current).ec : make_error_code(errc::not_owner);
    return current;
}

bool Lease::put_if_current(std::string_view key, std::string_view value) {
    bool put = false;
    need(s_).put_if_current(key, value, put).throw_if_error();
    return put;
}

bool Lease::put_if_current(std::string_view key, std::string_view value,
                           std::error_code& ec) noexcept {
    bool put = false;
    ec = s_ ? s_->put_if_current(key, value, put).ec : make_error_code(errc::not_owner);
    return put;
}

void Lease::release() {
    if (!s_) return;
    s_->release().throw_if_error();
}

void Lease::release(std::error_code& ec) noexcept {
    ec.clear();
    if (s_) ec = s_->release().ec;
}

std::error_code Lease::settle(clock::time_point deadline) const noexcept {
    return s_ ? s_->settle(deadline) : make_error_code(errc::invalid_argument);
}

}  // namespace deadbolt
