// The acquire loop: local queue, one attempt, then wait for the engine's wake-up, the
// holder's expiry or a refresh, whichever comes first. No polling.
#include "core/acquire.hpp"

#include <functional>

#include "core/acquire_fsm.hpp"
#include "core/client_impl.hpp"
#include "core/grant.hpp"
#include "core/lease_state.hpp"
#include "core/spare_claim.hpp"
#include "core/store.hpp"
#include "core/token.hpp"
#include "core/waiting.hpp"

namespace deadbolt::detail {
namespace {

Status enter_local_queue(ClientImpl& c, const std::string& line, const AcquireOptions& how,
                         const std::function<void()>& on_wait) {
    if (line.empty()) return {};
    switch (c.local.enter(line, how.deadline, how.cancel, on_wait)) {
        case LocalQueue::Result::entered:
            return {};
        case LocalQueue::Result::cancelled:
            return Status::error(errc::cancelled, "cancelled while waiting behind other threads");
        case LocalQueue::Result::timed_out:
            break;
    }
    return Status::error(errc::not_acquired,
                         "lock is held by another thread of this process and the wait elapsed");
}

// This thread's turn in the process's line for a name: left on every way out but a grant
// (whose lease leaves it at its release), exceptions too (a throwing on_wait, no memory), or
// the process's other threads would wait behind it for ever.
class LocalTurn {
  public:
    LocalTurn(LocalQueue& q, const std::string& line)
        : q_(line.empty() ? nullptr : &q), line_(line) {}
    ~LocalTurn() {
        if (q_) q_->leave(line_);
    }
    LocalTurn(const LocalTurn&) = delete;
    LocalTurn& operator=(const LocalTurn&) = delete;
    void hand_over() noexcept { q_ = nullptr; }

  private:
    LocalQueue* q_;
    const std::string& line_;
};

// One acquisition of spec with claim, from started.
Lease acquire_with(const std::shared_ptr<ClientImpl>& client, const LockSpec& spec, Claim* claim,
                   const AcquireOptions& how, Status& status, Clock::time_point started) {
    ClientImpl& c = *client;
    Store& store = *c.store;
    const ClaimTraits& traits = claim->traits();
    Attempted a;
    std::uint32_t refusals = 0;
    auto tell_event = [&](LockEventKind kind, std::error_code error, std::uint64_t fence = 0) {
        tell_acquire(c, spec, kind, a, started, refusals, error, fence);
    };
    // Another thread of this process holds the lock or waits for it: a refusal, as the
    // engine's (an observer counts the wait, and a try_lock that gives up as refused); one
    // that waited to its deadline met a second one there, as an engine's waiter does.
    auto refused_here = [&] {
        ++refusals;
        tell_event(LockEventKind::refused, {});
    };
    const std::string& line = text_of(traits.local_line);
    if (status = enter_local_queue(c, line, how, refused_here); !status.ok()) {
        if (status.ec == make_error_code(errc::not_acquired) && how.deadline &&
            *how.deadline > started)
            ++refusals;
        tell_event(LockEventKind::gave_up, status.ec);
        return {};
    }
    LocalTurn turn(c.local, line);

    const MutexOptions& options = spec.options;
    std::string token = spec.owner.empty() ? random_token() : spec.owner;
    auto px = options.ttl + options.lock_delay;
    AcquireFsm fsm(rules_for(c, spec, *claim, how, px), started);
    // Now, so that what follows does not meet it; in the background only when the engine
    // cannot be reached now.
    auto cleanup = [&](std::shared_ptr<Holding> h, const Step::Cleanup& when) {
        if ((!when.now || store.release_one(*h, store.deadline()).is == Verdict::Is::unknown) &&
            !when.once)
            c.renewer->add_cleanup(std::move(h), when.give_up);
    };
    Fences fences;
    for (Step step = fsm.start(Clock::now());;) {
        if (step.release) cleanup(claim->holding(token, px, 0), *step.release);
        if (step.abandon)
            if (auto w = claim->waiter(token, px)) cleanup(std::move(w), *step.abandon);
        if (step.new_token) token = random_token();
        if (step.unsubscribe) claim->disarm();
        if (step.report && how.on_wait) {
            try {
                how.on_wait(*step.report);
            } catch (...) {
                // The caller's callback ends the wait as a cancellation would: our place in
                // the engine's line is given up now, not left to hold others back until it
                // expires.
                Step end = fsm.cancelled(Clock::now());
                if (end.abandon)
                    if (auto w = claim->waiter(token, px)) cleanup(std::move(w), *end.abandon);
                if (end.unsubscribe) claim->disarm();
                throw;
            }
        }
        if (step.report && step.report->retrying)
            tell_event(LockEventKind::retrying, step.report->retrying);
        if (drive_wait(step, fsm, *claim, store, how)) continue;
        switch (step.next) {
            case Next::attempt:
                if (how.cancel.stop_requested()) {
                    step = fsm.cancelled(Clock::now());
                    break;
                }
                a = {};
                fences = {};
                a.sent_at = c.now();
                claim->attempt(token, px, a, fences);
                a.replied_at = c.now();
                tell_attempt(c, spec, a, started, refusals);
                step = fsm.attempted(a, Clock::now());
                break;
            case Next::subscribe:  // drive_wait's
            case Next::wait:
            case Next::sleep:
                break;
            case Next::confirm:
                step = fsm.confirmed(claim->confirm(), Clock::now());
                break;
            case Next::granted: {
                auto s = make_state(client, spec, *claim, std::move(token), std::move(fences), px,
                                    a.sent_at, step.until, true);
                turn.hand_over();             // s leaves the line at its release
                Lease lease = make_lease(s);  // from here on, an exception releases it
                tell_event(LockEventKind::granted, {}, s->fence);
                c.renewer->add(s);
                status = {};
                return lease;
            }
            case Next::failed:
                tell_event(LockEventKind::gave_up, step.status.ec);
                status = std::move(step.status);
                return {};
        }
    }
}

}  // namespace

Lease acquire_lease(const std::shared_ptr<ClientImpl>& client, const LockSpec& asked,
                    const AcquireOptions& how, Status& status, SpareClaim* spare) {
    auto started = Clock::now();
    Store& store = *client->store;
    // A lock object's names and options were checked as it was made.
    const bool kept = spare && &asked == &spare->spec();
    if (status = kept ? spare->valid() : validated(asked); status.ok())
        status = store.supports(asked);
    if (!status.ok()) return {};
    std::optional<LockSpec> cut;
    const LockSpec& spec = fitted(store, asked, cut);
    auto claim = spare ? spare->take(store, spec, how.cancel) : store.open(spec, how.cancel);
    Lease lease = acquire_with(client, spec, claim.get(), how, status, started);
    // Ended with an answer: the claim goes back to the lock object's spare. One that ended
    // with an exception (which skips this) is destroyed, as it may be part way through an
    // attempt.
    if (spare) spare->keep(std::move(claim));
    return lease;
}

}  // namespace deadbolt::detail
