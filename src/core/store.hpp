// The seam between the client's side of a lock (src/core) and the engine that keeps it (a
// backend; DESIGN section 12). A Store opens a Claim per acquisition; the Claim attempts,
// arms the engine's wake-up and waits for it; a grant becomes a Holding that the store
// extends, releases and checks, many at once. What the client decides with the answers
// (validity, late grants, cleanup, local queue, handoff, renewal, loss) lives in core only.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/acquire_fsm.hpp"
#include "core/capabilities.hpp"
#include "core/lock_spec.hpp"
#include "core/status.hpp"
#include "deadbolt/acquire_options.hpp"

namespace deadbolt::detail {

/// An engine's answer about a holding.
struct Verdict {
    enum class Is : unsigned char { yes, no, unknown };
    Is is = Is::unknown;
    Status status{};  // unknown: why (no answer, a refused command, ...)
    int woke = 0;     // a release that said yes: how many waiters it woke

    static Verdict yes(int woke = 0) { return {Is::yes, {}, woke}; }
    static Verdict no() { return {Is::no, {}, 0}; }
    static Verdict unknown(Status why) { return {Is::unknown, std::move(why), 0}; }
};

/// The engine's record of one holding (its keys, nodes, session): core only hands it back.
class Holding {
  public:
    virtual ~Holding() = default;
};

/// One extension: the holding, and how long the engine should keep it from now.
struct Renewal {
    const Holding* holding = nullptr;
    std::chrono::milliseconds keep{0};
};

/// The engine's wake-up for one waiter. Armed before the look it guards, so that a change
/// between the look and the wait is not missed.
class Waker {
  public:
    virtual ~Waker() = default;
    /// Arms the wake-up by until (the latest attempt's token decides what wakes it); fails
    /// when the engine cannot arm it now (the caller then sleeps instead).
    virtual Status arm(Clock::time_point until) = 0;
    /// Drops the wake-up. Idempotent; never throws.
    virtual void disarm() noexcept = 0;
    /// Until a wake-up, a reconnect, the claim's stop request or until.
    virtual void wait(Clock::time_point until) = 0;
};

/// Text a claim shares with the leases it grants, which keep it past the claim without a
/// copy each; null or empty: none.
using SharedText = std::shared_ptr<const std::string>;
/// t's text; empty when null.
inline const std::string& text_of(const SharedText& t) noexcept {
    static const std::string none;
    return t ? *t : none;
}

/// What the core must know of a claim to drive it.
struct ClaimTraits {
    SharedText local_line;   // threads of this process queue on it; null or empty = none
    SharedText handoff_key;  // releases of this lock hand over under this key
    bool hands_off = false;  // a release that woke waiters lets them go first
    bool abandons = false;   // a waiter leaves state to drop when it gives up
    // That state names the token (a FairMutex's queue entry, a writer's claim), so a new token
    // (after a failed grant's release was left to the background) drops it too; otherwise the
    // waiter keeps its place across tokens.
    bool waiter_names_token = true;
    bool wakes_by_token = false;     // wake-ups are addressed to the token (a FairMutex grant)
    bool can_sleep_instead = false;  // the wake-up may be away for a moment (Redlock, Cluster)
    bool expiry_wakes = false;       // a holder's expiry wakes waiters too (etcd deletes its key)
    bool strays_live_on = false;     // a stray key lives while the client does (etcd's session)
    std::chrono::milliseconds refresh{0};  // look again at least this often while waiting
};

/// A grant's fences: one per name (a MultiLock's in names' order), or none when unfenced.
struct Fences {
    std::uint64_t fence = 0;
    std::vector<std::uint64_t> each;
};

/// One acquisition on an engine: a waiter's place, then a holding.
class Claim : public Waker {
  public:
    virtual const ClaimTraits& traits() const = 0;
    /// One attempt for token: a.acquired with fences, refused with a.pttl (when to look
    /// again, -1 = the holder set no expiry), or a.status when there was no answer
    /// (unknown_outcome: sent, the reply lost). a.sent_at/replied_at are the caller's.
    virtual void attempt(const std::string& token, std::chrono::milliseconds keep, Attempted& a,
                         Fences& f) = 0;
    /// The last grant is replicated as the options ask; ok when nothing is asked.
    virtual Status confirm() = 0;
    /// What token holds, or may hold after a lost reply: what extend, release and check use.
    /// fence: the grant's (Fences::fence), 0 when none was heard; a fixed owner's release is
    /// bounded by it, since its token is the same in the owner's next holding.
    virtual std::shared_ptr<Holding> holding(const std::string& token,
                                             std::chrono::milliseconds keep,
                                             std::uint64_t fence) const = 0;
    /// token's state as a waiter, to drop when it gives up (traits().abandons); null when
    /// this claim left none (it never waited where the engine keeps waiters).
    virtual std::shared_ptr<Holding> waiter(const std::string& token,
                                            std::chrono::milliseconds keep) const = 0;

    // The asynchronous forms, run on the client's event loop; each calls back there once.
    // The defaults run the blocking forms there: correct, but they hold the loop for their
    // round trips, so an engine overrides what it can do without blocking.

    /// attempt() without blocking; done() once a is filled.
    virtual void async_attempt(const std::string& token, std::chrono::milliseconds keep,
                               Attempted& a, Fences& f, std::function<void()> done);
    /// arm() without blocking.
    virtual void async_arm(Clock::time_point until, std::function<void(Status)> done);
    /// Calls woken() at the next wake-up (once), unless cancel_wait() comes first. The caller
    /// ends the wait at its own time; the default never wakes (the caller's time ends it).
    virtual void async_wait(std::function<void()> woken);
    /// Whether async_wait() wakes; when not, the asynchronous acquire runs wait() on a thread
    /// of its own, so that its waiter is still woken by a release, not by the holder's TTL.
    virtual bool wakes_async() const { return false; }
    /// Drops a pending async_wait(); never throws.
    virtual void cancel_wait() noexcept {}
    /// confirm() without blocking.
    virtual void async_confirm(std::function<void(Status)> done);

    /// Ends this claim's acquisition as its destructor would (what it took and did not hand
    /// over goes back) and readies it for another acquisition of the same spec: true when it
    /// can be reopened (SpareClaim keeps it), false, the default, when it must be destroyed.
    /// Never throws.
    virtual bool recycle() noexcept { return false; }
    /// Starts a recycled claim's next acquisition, cancelled by cancel, as a claim the store
    /// just opened would.
    virtual void reopen(const std::stop_token& cancel) { (void)cancel; }
};

/// An engine that keeps locks.
class Store {
  public:
    virtual ~Store() = default;
    /// Ok when the engine can keep spec; else invalid_argument saying why not and what can.
    virtual Status supports(const LockSpec& spec) const = 0;
    /// A claim for spec; cancel cuts its waits short.
    virtual std::unique_ptr<Claim> open(const LockSpec& spec, std::stop_token cancel) = 0;

    /// Extends every renewal at once: one verdict each (yes only once replicated as asked).
    virtual std::vector<Verdict> extend(std::span<const Renewal> rs, Clock::time_point by) = 0;
    /// Releases every holding at once: one verdict each (no: it was not ours any more).
    virtual std::vector<Verdict> release(std::span<const Holding* const> hs,
                                         Clock::time_point by) = 0;
    /// release() of one holding, the usual case; the default asks release() (an engine that
    /// answers it without a list of verdicts saves an allocation per release).
    virtual Verdict release_one(const Holding& h, Clock::time_point by);
    /// release() of one holding without blocking, on the client's event loop; the default
    /// runs release() there.
    virtual void async_release(std::shared_ptr<const Holding> h, Clock::time_point by,
                               std::function<void(Verdict)> done);
    /// Asks whether each holding is still ours: one verdict each.
    virtual std::vector<Verdict> check(std::span<const Holding* const> hs,
                                       Clock::time_point by) = 0;

    /// One command's deadline from now (the client's command timeout).
    virtual Clock::time_point deadline() const = 0;
    /// The deadline of one operation on a holding of ttl (a node timeout on Redlock, so that
    /// a slow node costs its vote and not the holding's validity).
    virtual Clock::time_point deadline_for(std::chrono::milliseconds ttl) const = 0;
    /// The longest ttl a holding keeps here; a longer one asked for is cut to it (ZooKeeper:
    /// the session timeout, since a holding cannot outlive its session's silence).
    virtual std::chrono::milliseconds longest_ttl() const { return kMaxTtl; }
    /// A yes that arrives after the holding's validity ended is a loss (Redlock: others may
    /// have taken the nodes where it had expired).
    virtual bool late_yes_is_lost() const = 0;

    // What primitives ask besides acquisitions (capabilities.hpp): the engine's interface
    // where it offers one as connected, null where not (refusal() then says why).
    virtual Latches* latches() { return nullptr; }
    virtual Elections* elections() { return nullptr; }
    virtual Permits* permits() { return nullptr; }
    virtual RateLimits* rate_limits() { return nullptr; }
    virtual Admin* admin() { return nullptr; }
    virtual FencedData* fenced_data() { return nullptr; }
    virtual HeldWrites* held_writes() { return nullptr; }

    /// Ok when this engine, as connected, keeps locks of shape (asked when a handle is made,
    /// before any name or option is known); else invalid_argument saying why not.
    virtual Status keeps(Shape shape) const;
    /// Why this engine, as connected, does not offer what (a capability's kWhat, or a
    /// primitive's name): invalid_argument naming the engine, the reason and where it is
    /// offered instead.
    virtual Status refusal(std::string_view what) const;

    /// The engine answers.
    virtual Status ping();

    /// Stops the engine's background work (following a topology's moves). Never throws.
    virtual void stop() noexcept {}

    /// The engine may have dropped holdings by itself (a failover, a session expiry): the
    /// store calls this, and the client checks every holding. Set once, before any claim.
    std::function<void()> on_doubt;
    /// Which holdings a doubt concerns (empty: all of them).
    using Concerns = std::function<bool(const Holding&)>;
    /// The engine saw a sign that some holdings may be gone (a force-unlock, a key deleted, a
    /// server that came back): the store calls this from any of its threads, and the client
    /// checks soon, on its own thread, each holding that concerns says is concerned, and
    /// reports those the engine no longer holds as lost. Never blocks the caller. Set once,
    /// before any claim.
    std::function<void(Concerns concerns)> on_doubt_of;
};

/// c, a capability store handed out (store.latches(), ...), or store's refusal of what thrown
/// (UsageError) when store does not offer it.
template <class C>
C& offered(const Store& store, C* c, std::string_view what = C::kWhat) {
    if (c != nullptr) return *c;
    Status why = store.refusal(what);
    if (why.ok()) throw_error(make_error_code(errc::invalid_argument), std::string(what));
    throw_error(why.ec, why.detail.empty() ? why.ec.message() : why.detail);
}

}  // namespace deadbolt::detail
