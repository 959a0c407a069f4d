#include "backends/redis/claim.hpp"
#include "backends/redis/store.hpp"

#include <cctype>

#include "backends/redis/holding.hpp"
#include "backends/redis/net/async_connection.hpp"
#include "backends/redis/net/status.hpp"
#include "backends/redis/replies.hpp"
#include "backends/redis/topology/multi_slots.hpp"
#include "backends/redis/topology/redlock.hpp"

namespace deadbolt::detail {
namespace {

// What an attempt's outcome tells the machine, and its fences.
void report(AttemptOutcome out, Attempted& a, Fences& f) {
    a.acquired = out.acquired;
    a.pttl = out.pttl;
    a.cleanup_pending = out.cleanup_pending;
    a.wake_spent = out.wake_spent;
    f.fence = out.fence;
    f.each = std::move(out.fences);
}

}  // namespace

namespace {

// A waiter that may miss its wake-up looks again every waiter_ttl (5 s by default) rather than
// sleep until the holder's expiry:
//  * a Redlock waiter listens on one node but lines up on every node that refused it; when the
//    nodes' views split (a release reached one node before the attempt, the others after),
//    only lines on nodes it does not listen on are woken;
//  * on a Cluster a release's message crosses the cluster bus to the waiter's node, and the
//    bus drops what it sends while a link is re-established (after a failover: a loaded run
//    saw a waiter sleep 27 s past the release).
std::chrono::milliseconds refresh_for(ClientImpl& c, const RedisSpec& spec) {
    bool may_miss = redis(c).nodes->redlock() || redis(c).cluster != nullptr;
    if (!may_miss || spec.line.empty() || spec.refresh.count() > 0) return spec.refresh;
    return spec.waiter_ttl;
}

}  // namespace

RedisClaim::RedisClaim(ClientImpl& c, std::shared_ptr<const RedisSpec> spec, std::stop_token cancel)
    : c_(c),
      shared_(std::move(spec)),
      spec_(*shared_),
      // Views into the name's shared spec: a claim copies neither.
      traits_{.local_line = SharedText(shared_, &spec_.queue_key),
              .handoff_key = SharedText(shared_, &spec_.channel),
              .hands_off = spec_.kind->yield_after_release,
              .abandons = spec_.abandon != nullptr,
              // A place in line is this claim's, not its token's (member()); a writer's claim
              // key and a FairMutex queue entry hold the token.
              .waiter_names_token = spec_.abandon != &leave_line_script(),
              .wakes_by_token = !spec_.grant_prefix.empty(),
              .can_sleep_instead = redis(c).nodes->redlock() || redis(c).cluster != nullptr,
              .refresh = refresh_for(c, spec_)},
      waker_(
          c, [this] { return channels(); }, std::move(cancel), spec_.standby) {}

// A FairMutex waiter sleeps on its own grant channel; the others in the name's line, where a
// release tells them through this client's inbox, in the mailbox of each name they want
// (several for a MultiLock). The mailboxes come first: a stop request pokes the first channel,
// which wakes this waiter alone (a poke of the inbox would wake every waiter of the client).
std::vector<std::string> RedisClaim::channels() const {
    if (!spec_.grant_prefix.empty()) return {spec_.grant_prefix + argv_.front()};
    std::vector<std::string> out{Subscriber::mailbox(spec_.channel)};
    for (const auto& box : spec_.extra_channels) out.push_back(Subscriber::mailbox(box));
    out.push_back(redis(c_).inbox());
    return out;
}

std::string RedisClaim::member(const std::string& token) const {
    // A cluster client listens on any node, and a PUBLISH counts only the listeners on the
    // lock's own: upper case asks the release to take it at its word.
    char role = spec_.role;
    if (redis(c_).cluster) role = static_cast<char>(std::toupper(static_cast<unsigned char>(role)));
    const std::string& inbox = redis(c_).inbox();
    // The claim's first token names its place for good: a new token (a failed grant's release
    // left to the background) keeps the place in line.
    return role + std::to_string(inbox.size()) + ':' + inbox +
           (line_id_.empty() ? token : line_id_);
}

void RedisClaim::lined_up(const AttemptOutcome& out) {
    if (!out.ticket.empty()) ticket_ = out.ticket;
}

ScriptCall RedisClaim::call() const {
    ScriptCall c{
        spec_.script, {spec_.keys.begin(), spec_.keys.end()}, {argv_.begin(), argv_.end()}};
    // An attempt that does not line up (a try, or the first look before its client listens)
    // names no line: the scripts touch one only for a member or a ticket, and a slot that
    // migrates answers a script naming a key it lacks (a line nobody waits in) with TRYAGAIN.
    if (!spec_.line.empty() && argv_.size() >= 2 && argv_[argv_.size() - 2].empty() &&
        ticket_.empty())
        c.keys.resize(c.keys.size() - std::max<std::size_t>(spec_.names.size(), 1));
    return c;
}

void RedisClaim::set_argv(const std::string& token, std::chrono::milliseconds keep) {
    argv_ = {token, std::to_string(keep.count()),
             redlock_fence_px(*redis(c_).nodes, spec_,
                              std::to_string((keep + std::chrono::minutes(1)).count()))};
    argv_.insert(argv_.end(), spec_.args.begin(), spec_.args.end());
    if (spec_.line.empty()) return;
    if (line_id_.empty()) line_id_ = token;
    argv_.push_back(armed_ ? member(token) : std::string());
    argv_.push_back(ticket_);
}

Status RedisClaim::arm(Clock::time_point until) {
    Status st = waker_.arm(until);
    armed_ = st.ok();
    return st;
}

void RedisClaim::async_attempt(const std::string& token, std::chrono::milliseconds keep,
                               Attempted& a, Fences& f, std::function<void()> done) {
    if (redis(c_).nodes->redlock()) {
        set_argv(token, keep);
        return redlock_async_attempt(
            c_, shared_, call(), keep, a.sent_at,
            [this, &a, &f, done = std::move(done)](Status st, AttemptOutcome out) {
                a.status = std::move(st);
                reported(std::move(out), a, f);
                done();
            });
    }
    set_argv(token, keep);
    ScriptCall c = call();
    // A MultiLock over several cluster slots takes them in order, one slot at a time: that
    // blocks the loop for now (the default). So does a grant that WAIT confirms
    // (sync_replicas): WAIT counts the writes of the connection it runs on, the blocking one
    // (confirm), and the loop's own connection would leave it nothing to count.
    if (!redis(c_).can_eval_async(c) || redis(c_).ep.redis.sync_replicas > 0)
        return Claim::async_attempt(token, keep, a, f, std::move(done));
    redis(c_).async_eval(c, c_.deadline(),
                         [this, &a, &f, done = std::move(done)](const Status& st, const Reply& r) {
                             AttemptOutcome out;
                             a.status = !st.ok()       ? st
                                        : r.is_error() ? from_server_error(r.str)
                                                       : parse_acquire(r, out, spec_.fenced);
                             reported(std::move(out), a, f);
                             done();
                         });
}

void RedisClaim::attempt(const std::string& token, std::chrono::milliseconds keep, Attempted& a,
                         Fences& f) {
    set_argv(token, keep);
    ScriptCall c = call();
    AttemptOutcome out;
    if (redis(c_).nodes->redlock()) {
        a.status = redlock_attempt(c_, shared_, c, keep, a.sent_at, out);
    } else if (multi_spans_slots(c_, spec_)) {
        a.status = multi_slots_attempt(c_, spec_, c, keep, a.sent_at, out);
    } else {
        Reply reply;
        a.status = redis(c_).server->eval(c, reply, c_.deadline());
        if (a.status.ok()) a.status = parse_acquire(reply, out, spec_.fenced);
    }
    reported(std::move(out), a, f);
}

void RedisClaim::reported(AttemptOutcome out, Attempted& a, Fences& f) {
    lined_up(out);
    report(std::move(out), a, f);
}

Status RedisClaim::confirm() {
    ScriptCall c = call();
    Status st = redis(c_).server->confirm_replicated({&c, 1}, c_.deadline());
    granted_ = st.ok();
    return st;
}

void RedisClaim::disarm() noexcept {
    armed_ = false;
    waker_.disarm();
    if (async_waker_) async_waker_->disarm();
}

void RedisClaim::async_arm(Clock::time_point until, std::function<void(Status)> done) {
    if (!async_waker_)
        async_waker_ = std::make_unique<AsyncWaker>(
            redis(c_), [this] { return channels(); }, spec_.standby);
    async_waker_->arm(until, [this, done = std::move(done)](Status st) {
        armed_ = st.ok();
        done(std::move(st));
    });
}

void RedisClaim::async_wait(std::function<void()> woken) {
    if (async_waker_) async_waker_->wait(std::move(woken));
}

void RedisClaim::cancel_wait() noexcept {
    if (async_waker_) async_waker_->cancel_wait();
}

std::shared_ptr<Holding> RedisClaim::holding(const std::string& token,
                                             std::chrono::milliseconds keep,
                                             std::uint64_t fence) const {
    auto h = RedisHolding::held(shared_, token, keep);
    // The grant's holding, not what a failed attempt may have left to clean up.
    if (granted_) redis(c_).watch(*h);
    // A fixed owner's token stays the same from one holding to the next, so a release
    // answered too late and sent again from the background must not take the owner's next
    // grant: it releases only up to its own grant's fence (a new grant draws a higher one).
    if (granted_ && fence > 0 && !shared_->owner.empty() && shared_->kind->give_back)
        h->release_up_to(fence);
    return h;
}

std::shared_ptr<Holding> RedisClaim::waiter(const std::string& token,
                                            std::chrono::milliseconds keep) const {
    auto h = RedisHolding::waiting(shared_, token, keep);
    if (spec_.line.empty()) return h;  // a FairMutex waiter leaves its queue
    // Never in line: nothing to leave, unless it holds others back (a writer's claim).
    if (ticket_.empty() && spec_.abandon == &leave_line_script()) return nullptr;
    h->own_args = {ticket_.empty() ? std::string() : member(token)};
    h->own_args.insert(h->own_args.end(), spec_.abandon_args.begin(), spec_.abandon_args.end());
    return h;
}

}  // namespace deadbolt::detail
