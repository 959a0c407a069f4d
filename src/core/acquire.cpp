// The acquire algorithm: local queue, one attempt, then wait for a release message or the
// holder's expiry, whichever comes first. No polling.
#include <fmt/format.h>

#include "core/backoff.hpp"
#include "core/client_impl.hpp"
#include "core/lease_state.hpp"
#include "core/token.hpp"
#include "core/validity.hpp"
#include "deadbolt/client.hpp"
#include "redis/commands.hpp"
#include "redis/replies.hpp"

namespace deadbolt::detail {
namespace {

// A key with no expiry (set by another tool) never frees by itself; look again this often.
constexpr std::chrono::milliseconds kNoExpiryRecheck{1000};

}  // namespace

Lease acquire_lease(const std::shared_ptr<ClientImpl>& client, std::string_view name,
                    const MutexOptions& options, const AcquireOptions& how, Status& status) {
    auto started = Clock::now();
    if (status = validate_name(name); !status.ok()) return {};
    if (status = validate_options(options); !status.ok()) return {};
    ClientImpl& c = *client;
    LockKeys keys = lock_keys(c.ep.options.key_prefix, name);

    switch (c.local.enter(keys.lock, how.deadline, how.cancel)) {
        case LocalQueue::Result::entered:
            break;
        case LocalQueue::Result::cancelled:
            status = Status::error(errc::cancelled, "cancelled while waiting behind other threads");
            return {};
        case LocalQueue::Result::timed_out:
            status = Status::error(errc::not_acquired,
                                   fmt::format("lock is held by another thread of this process "
                                               "and the wait elapsed"));
            return {};
    }

    std::string token = random_token();
    auto px = options.ttl + options.lock_delay;
    std::string px_s = std::to_string(px.count());
    std::string fence_px_s = std::to_string((px + std::chrono::minutes(1)).count());
    bool subscribed = false;
    std::uint64_t seq = 0;
    std::optional<std::stop_callback<std::function<void()>>> on_cancel;
    auto finish = [&](Status st) {
        if (subscribed) c.subscriber().unsubscribe(keys.channel);
        status = std::move(st);
    };

    auto subscribe = [&](Clock::time_point now) {
        // Subscribe first, then try again: a release between our attempt and the
        // subscription would otherwise go unnoticed.
        auto sub_deadline = now + c.ep.options.command_timeout;
        if (how.deadline) sub_deadline = std::min(sub_deadline, *how.deadline);
        Status s = c.subscriber().subscribe(keys.channel, sub_deadline, &seq);
        if (!s.ok()) return s;
        subscribed = true;
        if (how.cancel.stop_possible())
            on_cancel.emplace(how.cancel, [&c, ch = keys.channel] { c.subscriber().poke(ch); });
        return s;
    };

    // We just released this lock to waiting clients: give the one that was woken a moment to
    // take it rather than barging back in ahead of it (which starves other processes).
    if (auto until = c.handoffs.yield_until(keys.lock)) {
        if (how.deadline) until = std::min(*until, *how.deadline);
        if (subscribe(Clock::now()).ok()) seq = c.subscriber().wait(keys.channel, seq, *until);
    }

    for (;;) {
        if (how.cancel.stop_requested()) {
            finish(Status::error(errc::cancelled, "cancelled while waiting for the lock"));
            break;
        }
        auto sent_at = c.now();
        Reply reply;
        Status st =
            eval(*c.conn, {&acquire_script(), {keys.lock, keys.fence}, {token, px_s, fence_px_s}},
                 reply, c.deadline());
        AttemptOutcome out;
        if (st.ok()) st = parse_acquire(reply, out);
        if (!st.ok()) {
            // After a lost reply we may hold the lock unknowingly: delete our token in the
            // background, retrying until the key would have expired anyway.
            if (st.ec == make_error_code(errc::unknown_outcome))
                c.renewer->add_cleanup(keys.lock, keys.channel, token, sent_at + px);
            finish(std::move(st));
            break;
        }
        if (out.acquired) {
            auto valid_until = validity_deadline(sent_at, options.ttl);
            if (c.now() >= valid_until) {
                // The reply came too late to leave any validity (a stalled link): nobody may
                // act on this lock, so free it in the background and try afresh with a new
                // token (the cleanup must not delete our next acquisition). Its fence is unused.
                c.renewer->add_cleanup(keys.lock, keys.channel, token, sent_at + px);
                token = random_token();
                continue;
            }
            auto s = std::make_shared<LeaseState>();
            s->client = client;
            s->name = std::string(name);
            s->keys = std::move(keys);
            s->token = std::move(token);
            s->fence = out.fence;
            s->options = options;
            s->px = px;
            s->acquired_at = sent_at;
            s->set_valid_until(valid_until);
            c.renewer->add(s);
            if (subscribed) c.subscriber().unsubscribe(s->keys.channel);
            status = {};
            return Lease(std::move(s));
        }
        auto now = Clock::now();
        if (how.on_wait)
            how.on_wait(WaitInfo{
                std::chrono::duration_cast<std::chrono::milliseconds>(now - started), out.pttl});
        if (how.deadline && now >= *how.deadline) {
            finish(Status::error(errc::not_acquired,
                                 fmt::format("lock '{}' is held by someone else (expires in {} ms)",
                                             name, out.pttl.count())));
            break;
        }
        if (!subscribed) {
            if (Status s = subscribe(now); !s.ok()) {
                if (s.ec == make_error_code(errc::timeout) && how.deadline &&
                    Clock::now() >= *how.deadline)
                    s = Status::error(errc::not_acquired,
                                      fmt::format("lock '{}' is held by someone else", name));
                status = std::move(s);
                break;
            }
            continue;
        }
        auto wake = out.pttl.count() < 0 ? now + kNoExpiryRecheck
                                         : now + out.pttl + random_jitter(options.wait_jitter);
        if (how.deadline) wake = std::min(wake, *how.deadline);
        seq = c.subscriber().wait(keys.channel, seq, wake);
    }
    c.local.leave(keys.lock);
    return {};
}

}  // namespace deadbolt::detail
