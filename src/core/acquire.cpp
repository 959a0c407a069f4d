// The acquire loop: local queue, one attempt, then wait for a release message, the holder's
// expiry or a refresh, whichever comes first. No polling.
#include "core/acquire.hpp"

#include <fmt/format.h>

#include "core/backoff.hpp"
#include "core/client_impl.hpp"
#include "core/lease_state.hpp"
#include "core/multi_slots.hpp"
#include "core/redlock.hpp"
#include "core/threads.hpp"
#include "core/token.hpp"
#include "core/validity.hpp"
#include "deadbolt/client.hpp"
#include "net/subscription.hpp"
#include "redis/commands.hpp"
#include "redis/replies.hpp"

namespace deadbolt::detail {
namespace {

// A key with no expiry (set by another tool) never frees by itself; look again this often.
constexpr std::chrono::milliseconds kNoExpiryRecheck{1000};

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

// What a waiter with time left rides out: the server is away for a moment (restarting,
// failing over, loading), not refusing us.
bool rides_out(std::error_code ec) {
    for (errc e :
         {errc::connect_failed, errc::connection_lost, errc::timeout, errc::unknown_outcome,
          errc::readonly, errc::loading, errc::busy, errc::no_quorum, errc::not_replicated})
        if (ec == make_error_code(e)) return true;
    return false;
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
    Subscription sub(c.subscriber());
    bool queued = false;         // the server may know us as a waiter (queue entry, writer's claim)
    bool sleep_instead = false;  // Redlock without release messages: timed waits
    auto cleanup = [&](const Script& script, const std::vector<std::string>& keys,
                       Clock::time_point give_up) {
        c.renewer->add_cleanup(lease_call(script, keys, token, spec.channel, px, spec.op_args),
                               give_up);
    };
    // Now, so that what follows does not meet it; in the background only when the server
    // cannot be reached now.
    auto cleanup_now = [&](const Script& script, const std::vector<std::string>& keys,
                           Clock::time_point give_up) {
        auto call = lease_call(script, keys, token, spec.channel, px, spec.op_args);
        Reply r;
        if (!c.nodes->eval(call.view(), r, c.deadline()).ok())
            c.renewer->add_cleanup(std::move(call), give_up);
    };
    auto finish = [&](Status st) {
        sub.unsubscribe();
        // The caller's next attempt must not meet its own queue entry or claim.
        if (queued && spec.abandon)
            cleanup_now(*spec.abandon, spec.abandon_keys, Clock::now() + px);
        status = std::move(st);
    };

    auto subscribe = [&](Clock::time_point now) {
        // Subscribe first, then try again: a release between our attempt and the
        // subscription would otherwise go unnoticed.
        auto sub_deadline = now + c.ep.options.command_timeout;
        if (how.deadline) sub_deadline = std::min(sub_deadline, *how.deadline);
        return sub.subscribe(channels(), sub_deadline, how.cancel);
    };

    // We just released this lock to waiting clients: give the one that was woken a moment to
    // take it rather than barging back in ahead of it (which starves other processes).
    if (auto until = c.handoffs.yield_until(spec.channel)) {
        if (how.deadline) until = std::min(*until, *how.deadline);
        if (subscribe(Clock::now()).ok()) sub.wait(*until);
    }

    unsigned blips = 0;  // connection errors waited out in a row
    // True when st is a blip worth waiting out before the deadline: reports it, pauses.
    auto wait_out = [&](const Status& st) {
        if (!how.deadline || !rides_out(st.ec) || Clock::now() >= *how.deadline) return false;
        if (how.on_wait)
            how.on_wait(WaitInfo{
                std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started),
                std::chrono::milliseconds(0), st.ec});
        auto pause = jittered_backoff(blips++, std::chrono::milliseconds(50),
                                      std::chrono::milliseconds(250));
        sleep_until(std::min(Clock::now() + pause, *how.deadline), how.cancel);
        return true;
    };

    std::vector<std::string_view> args{token, px_s, fence_px_s};
    args.insert(args.end(), spec.args.begin(), spec.args.end());
    for (;;) {
        if (how.cancel.stop_requested()) {
            finish(Status::error(errc::cancelled, "cancelled while waiting for the lock"));
            break;
        }
        auto sent_at = c.now();
        args[0] = token;
        ScriptCall call{spec.script, {spec.keys.begin(), spec.keys.end()}, args};
        AttemptOutcome out;
        Status st;
        if (c.nodes->redlock()) {
            st = redlock_attempt(c, spec, call, px, sent_at, out);
        } else if (multi_spans_slots(c, spec)) {
            st = multi_slots_attempt(c, spec, call, px, sent_at, out);
        } else {
            Reply reply;
            st = c.server->eval(call, reply, c.deadline());
            if (st.ok()) st = parse_acquire(reply, out, spec.fenced);
        }
        // A failed attempt may have left its release to the background (a node that did not
        // answer): the next attempt must not share its token, or that release would delete
        // the next grant. A writer's claim names the old token: drop it, the next attempt
        // claims afresh.
        if (st.ok() && out.cleanup_pending && spec.owner.empty()) {
            if (spec.abandon) cleanup_now(*spec.abandon, spec.abandon_keys, Clock::now() + px);
            token = random_token();
        }
        if (!st.ok()) {
            // After a lost reply we may hold the lock unknowingly: release it in the
            // background, retrying until it would have expired anyway. Not for a fixed owner
            // (ReentrantMutex): if the request never ran, that release would take back a count
            // of the owner's other holdings; its grant, if any, expires by itself.
            bool unknown = st.ec == make_error_code(errc::unknown_outcome);
            if (unknown && spec.owner.empty())
                cleanup(*spec.kind->release, spec.op_keys, sent_at + px);
            // A fixed owner's lost grant would make a retry a re-entry: it stops here.
            if ((!unknown || spec.owner.empty()) && wait_out(st)) {
                if (unknown) {  // the cleanup must not delete our next grant: a new token
                    if (queued && spec.abandon)
                        cleanup(*spec.abandon, spec.abandon_keys, Clock::now() + px);
                    token = random_token();
                    if (!spec.grant_prefix.empty()) sub.unsubscribe();  // grants name the token
                }
                continue;
            }
            finish(std::move(st));
            break;
        }
        blips = 0;
        if (out.acquired) {
            auto valid_until = validity_deadline(sent_at, options.ttl);
            if (c.now() >= valid_until) {
                // The reply came too late to leave any validity (a stalled link): nobody may
                // act on this grant, so free it in the background and try afresh with a new
                // token (the cleanup must not delete our next acquisition). Its fence is unused.
                cleanup(*spec.kind->release, spec.op_keys, sent_at + px);
                if (spec.owner.empty()) {
                    token = random_token();
                    if (!spec.grant_prefix.empty()) sub.unsubscribe();  // grants name the token
                }
                continue;
            }
            if (Status rs = c.server->confirm_replicated({&call, 1}, c.deadline()); !rs.ok()) {
                // Held on the primary only: a failover could hand it to someone else.
                cleanup_now(*spec.kind->release, spec.op_keys, sent_at + px);
                finish(std::move(rs));
                break;
            }
            sub.unsubscribe();
            auto s =
                make_state(client, spec, std::move(token), out.fence, px, sent_at, valid_until);
            s->fences = std::move(out.fences);
            c.renewer->add(s);
            status = {};
            return Lease(std::move(s));
        }
        queued = true;
        auto now = Clock::now();
        if (how.on_wait)
            how.on_wait(WaitInfo{
                std::chrono::duration_cast<std::chrono::milliseconds>(now - started), out.pttl});
        if (how.deadline && now >= *how.deadline) {
            finish(Status::error(errc::not_acquired,
                                 fmt::format("lock '{}' is held by someone else (expires in {} ms)",
                                             spec.name, out.pttl.count())));
            break;
        }
        if (!sub.active() && !sleep_instead) {
            if (Status s = subscribe(now); !s.ok() && (c.nodes->redlock() || c.cluster) &&
                                           s.ec != make_error_code(errc::cancelled)) {
                // The node that carries release messages is down: the other Redlock nodes may
                // still make a majority, and the subscriber moves to another node. Wake at the
                // holder's expiry this time, and subscribe again after.
                sleep_instead = true;
            } else if (!s.ok() && wait_out(s)) {
                continue;
            } else if (!s.ok()) {
                if (s.ec == make_error_code(errc::timeout) && how.deadline &&
                    Clock::now() >= *how.deadline)
                    s = Status::error(errc::not_acquired,
                                      fmt::format("lock '{}' is held by someone else", spec.name));
                finish(std::move(s));
                break;
            }
            continue;
        }
        auto wake = out.pttl.count() < 0 ? now + kNoExpiryRecheck
                                         : now + out.pttl + random_jitter(options.wait_jitter);
        if (spec.refresh.count() > 0) wake = std::min(wake, now + spec.refresh);
        if (how.deadline) wake = std::min(wake, *how.deadline);
        if (sleep_instead) {
            sleep_until(wake, how.cancel);
            sleep_instead = false;  // the subscriber has moved to another node by now: subscribe
        } else {
            sub.wait(wake);
        }
    }
    if (!spec.queue_key.empty()) c.local.leave(spec.queue_key);
    return {};
}

}  // namespace deadbolt::detail
