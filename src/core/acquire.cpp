// The acquire loop: local queue, one attempt, then wait for a release message, the holder's
// expiry or a refresh, whichever comes first. No polling.
#include "core/acquire.hpp"

#include <fmt/format.h>

#include <random>

#include "core/acquire_fsm.hpp"
#include "core/client_impl.hpp"
#include "core/events.hpp"
#include "core/lease_state.hpp"
#include "core/multi_slots.hpp"
#include "core/redlock.hpp"
#include "core/token.hpp"
#include "core/validity.hpp"
#include "core/wakeups.hpp"
#include "deadbolt/client.hpp"
#include "redis/commands.hpp"
#include "redis/replies.hpp"

namespace deadbolt::detail {
namespace {

std::shared_ptr<LeaseState> make_state(const std::shared_ptr<ClientImpl>& client,
                                       const AcquireSpec& spec, std::string token,
                                       std::uint64_t fence, std::chrono::milliseconds px,
                                       Clock::time_point sent_at, Clock::time_point valid_until) {
    auto s = std::make_shared<LeaseState>();
    s->client = client;
    s->name = spec.name;
    s->kind = spec.kind;
    s->op_keys = spec.op_keys;
    s->op_args = spec.op_args;
    s->channel = spec.channel;
    s->queue_key = spec.queue_key;
    s->left_queue = spec.queue_key.empty();
    s->token = std::move(token);
    s->fence = fence;
    s->names = spec.names;
    s->options = spec.options;
    s->px = px;
    s->acquired_at = sent_at;
    s->set_valid_until(valid_until);
    return s;
}

}  // namespace

Lease acquire_lease(const std::shared_ptr<ClientImpl>& client, const AcquireSpec& spec,
                    const AcquireOptions& how, Status& status) {
    auto started = Clock::now();
    status = spec.kind == &multi_kind() ? validate_names(spec.names) : validate_name(spec.name);
    if (!status.ok()) return {};
    if (status = validate_options(spec.options); !status.ok()) return {};
    if (client->nodes->redlock())
        if (status = redlock_supports(spec); !status.ok()) return {};
    ClientImpl& c = *client;
    const MutexOptions& options = spec.options;

    if (!spec.queue_key.empty()) {
        switch (c.local.enter(spec.queue_key, how.deadline, how.cancel)) {
            case LocalQueue::Result::entered:
                break;
            case LocalQueue::Result::cancelled:
                status =
                    Status::error(errc::cancelled, "cancelled while waiting behind other threads");
                return {};
            case LocalQueue::Result::timed_out:
                status = Status::error(errc::not_acquired,
                                       fmt::format("lock is held by another thread of this "
                                                   "process and the wait elapsed"));
                return {};
        }
    }

    std::string token = spec.owner.empty() ? random_token() : spec.owner;
    auto px = options.ttl + options.lock_delay;
    std::string px_s = std::to_string(px.count());
    std::string fence_px_s = std::to_string((px + std::chrono::minutes(1)).count());
    AcquireFsm fsm(AcquireRules{.name = spec.name,
                                .ttl = options.ttl,
                                .px = px,
                                .deadline = how.deadline,
                                .refresh = spec.refresh,
                                .wait_jitter = options.wait_jitter,
                                .fixed_owner = !spec.owner.empty(),
                                .abandons = spec.abandon != nullptr,
                                .wakes_by_token = !spec.grant_prefix.empty(),
                                .can_sleep_instead = c.nodes->redlock() || c.cluster != nullptr,
                                .yield_until = c.handoffs.yield_until(spec.channel),
                                .seed = std::random_device{}()},
                   started);
    Wakeups wake(c, how);
    // A FairMutex waiter sleeps on its own grant channel; the others on every release channel
    // of what they want (several for a MultiLock).
    auto channels = [&] {
        std::vector<std::string> out;
        if (!spec.grant_prefix.empty()) {
            out.push_back(spec.grant_prefix + token);
        } else {
            out.push_back(spec.channel);
            out.insert(out.end(), spec.extra_channels.begin(), spec.extra_channels.end());
        }
        return out;
    };
    auto cleanup = [&](const Script& script, const std::vector<std::string>& keys,
                       const Step::Cleanup& how_) {
        auto call = lease_call(script, keys, token, spec.channel, px, spec.op_args);
        Reply r;
        // Now, so that what follows does not meet it; in the background only when the server
        // cannot be reached now.
        if (!how_.now || !c.nodes->eval(call.view(), r, c.deadline()).ok())
            c.renewer->add_cleanup(std::move(call), how_.give_up);
    };

    std::vector<std::string_view> args{token, px_s, fence_px_s};
    args.insert(args.end(), spec.args.begin(), spec.args.end());
    AttemptOutcome out;
    Clock::time_point sent_at{};       // of the last attempt: a lease's validity counts from there
    std::chrono::microseconds took{};  // the last attempt's round trip
    auto tell_event = [&](LockEventKind kind, std::error_code error, std::uint64_t fence = 0) {
        if (!c.ep.options.observer) return;
        tell(
            c.ep.options.observer,
            LockEvent{kind, spec.name, spec.primitive, took,
                      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started),
                      fence, error});
    };
    for (Step step = fsm.start(Clock::now());;) {
        if (step.release) cleanup(*spec.kind->release, spec.op_keys, *step.release);
        if (step.abandon) cleanup(*spec.abandon, spec.abandon_keys, *step.abandon);
        if (step.new_token) token = random_token();
        if (step.unsubscribe) wake.unsubscribe();
        if (step.report && how.on_wait) how.on_wait(*step.report);
        if (step.report && step.report->retrying)
            tell_event(LockEventKind::retrying, step.report->retrying);
        args[0] = token;
        ScriptCall call{spec.script, {spec.keys.begin(), spec.keys.end()}, args};
        if (wake.drive(step, fsm, channels)) continue;
        switch (step.next) {
            case Next::attempt: {
                if (how.cancel.stop_requested()) {
                    step = fsm.cancelled(Clock::now());
                    break;
                }
                Attempted a;
                a.sent_at = sent_at = c.now();
                out = {};
                if (c.nodes->redlock()) {
                    a.status = redlock_attempt(c, spec, call, px, a.sent_at, out);
                } else if (multi_spans_slots(c, spec)) {
                    a.status = multi_slots_attempt(c, spec, call, px, a.sent_at, out);
                } else {
                    Reply reply;
                    a.status = c.server->eval(call, reply, c.deadline());
                    if (a.status.ok()) a.status = parse_acquire(reply, out, spec.fenced);
                }
                a.replied_at = c.now();
                took = micros(a.replied_at - a.sent_at);
                a.acquired = out.acquired;
                a.pttl = out.pttl;
                a.cleanup_pending = out.cleanup_pending;
                if (a.status.ec == make_error_code(errc::unknown_outcome))
                    tell_event(LockEventKind::unknown_outcome, a.status.ec);
                else if (a.status.ok() && !a.acquired)
                    tell_event(LockEventKind::refused, {});
                step = fsm.attempted(a, Clock::now());
                break;
            }
            case Next::subscribe:  // wake.drive's
            case Next::wait:
            case Next::sleep:
                break;
            case Next::confirm:
                step = fsm.confirmed(c.server->confirm_replicated({&call, 1}, c.deadline()),
                                     Clock::now());
                break;
            case Next::granted: {
                auto s =
                    make_state(client, spec, std::move(token), out.fence, px, sent_at, step.until);
                s->fences = std::move(out.fences);
                s->primitive = spec.primitive;
                tell_event(LockEventKind::granted, {}, s->fence);
                c.renewer->add(s);
                status = {};
                return Lease(std::move(s));
            }
            case Next::failed:
                tell_event(LockEventKind::gave_up, step.status.ec);
                status = std::move(step.status);
                if (!spec.queue_key.empty()) c.local.leave(spec.queue_key);
                return {};
        }
    }
}

}  // namespace deadbolt::detail
