#include "backends/redis/topology/redlock.hpp"

#include "backends/redis/store.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <optional>

#include "backends/redis/holding.hpp"
#include "backends/redis/scripts.hpp"
#include "core/backoff.hpp"
#include "core/client_impl.hpp"
#include "core/quorum.hpp"
#include "core/validity.hpp"

namespace deadbolt::detail {
namespace {

// After a split vote every contender backs off for a random while, so one of them can win the
// next round instead of all splitting again.
constexpr std::chrono::milliseconds kSplitVoteMin{5};
constexpr std::chrono::milliseconds kSplitVoteSpread{45};

std::chrono::milliseconds split_vote_delay() {
    return kSplitVoteMin + random_jitter(kSplitVoteSpread);
}

// Gives back what the attempt may hold on `nodes` (those that granted, or whose answer is
// unknown); a node that does not answer gets it in the background. then(true) when one did:
// the next attempt must not share the token, or that late release could delete its grant.
// With fence_at_most: the kind's give_back, which spares a holding with a higher fence. Once:
// nothing in the background (a fixed owner's give-back counts a hold down, and sent again after
// it ran unheard it would take another of the owner's holds there; its grant expires instead).
void release_on(ClientImpl& c, const std::shared_ptr<const RedisSpec>& spec,
                const std::string& token, std::chrono::milliseconds px, Clock::time_point give_up,
                const std::vector<std::size_t>& nodes, std::function<void(bool)> then,
                std::optional<std::uint64_t> fence_at_most = std::nullopt, bool once = false) {
    if (nodes.empty()) return then(false);
    std::shared_ptr<RedisHolding> held = RedisHolding::held(spec, token, px);
    if (fence_at_most) held->release_up_to(*fence_at_most);
    const std::string px_s = std::to_string(px.count());
    auto call =
        std::make_shared<std::vector<OwnedCall>>(1, owned(held->call(*held->release, px_s)));
    redis(c).nodes->async_everywhere(
        call, c.deadline(), nodes, nullptr,
        [renewer = c.renewer, held, nodes, give_up, once,
         then = std::move(then)](const std::vector<NodeReplies>& results) {
            bool later = false;
            for (std::size_t k = 0; k < results.size(); ++k) {
                if (results[k].status.ok() || once) continue;
                auto one = std::make_shared<RedisHolding>(*held);
                one->node = nodes[k];
                renewer->add_cleanup(std::move(one), give_up);
                later = true;
            }
            then(later);
        });
}

// Whether round 1 proposes a fence the nodes may agree on: a fenced holding that is a plain
// token (a reentrant owner's or an election's hash keeps the fence too, which round 2 writes).
bool proposes_fence(const Nodes& nodes, const RedisSpec& spec) {
    return nodes.redlock() && nodes.fencing() && spec.fenced && spec.kind->held_as == "token";
}

// What round 1 brought back from every node.
struct Round1 {
    std::vector<std::size_t> granted;
    std::vector<std::vector<std::uint64_t>> counters;  // per lock: each grant's counter
    std::size_t reentered = 0;                         // grants that were re-entries
    std::uint64_t reentry_fence = 0;                   // the fence those re-entries carry
    std::vector<std::chrono::milliseconds> refusals;
    std::size_t answered = 0;
    std::vector<std::size_t> maybe_ours;  // granted, or the answer is unknown: release there
    std::vector<std::uint64_t> fence_of;  // per node: the fence its grant carried (0: none)
    Status hard;                          // an answer no retry can change (a wrong-typed key)
    std::string ticket;                   // a refusal's place in line (any node's will do)
};

Round1 tally_round1(const std::vector<NodeReplies>& replies, std::size_t locks, bool fenced) {
    Round1 r;
    r.counters.resize(locks);
    r.fence_of.resize(replies.size());
    for (std::size_t i = 0; i < replies.size(); ++i) {
        if (!replies[i].status.ok()) {
            r.maybe_ours.push_back(i);
            continue;
        }
        AttemptOutcome o;
        const Reply& reply = replies[i].replies.front();
        Status st =
            reply.is_error() ? from_server_error(reply.str) : parse_acquire(reply, o, fenced);
        if (!st.ok()) {
            if (!is_retryable(st.ec) && r.hard.ok()) r.hard = st;
            continue;  // LOADING, BUSY, ...: no vote this time
        }
        ++r.answered;
        if (!o.acquired) {
            r.refusals.push_back(o.pttl);
            if (r.ticket.empty()) r.ticket = std::move(o.ticket);
            continue;
        }
        r.granted.push_back(i);
        r.maybe_ours.push_back(i);
        r.fence_of[i] = o.fence;
        if (o.fences.empty()) o.fences.push_back(o.fence);
        for (std::size_t k = 0; k < locks && k < o.fences.size(); ++k)
            r.counters[k].push_back(o.fences[k]);
        if (o.again) {
            ++r.reentered;
            r.reentry_fence = std::max(r.reentry_fence, o.fence);
        }
    }
    return r;
}

// Whether round 1's answers so far decide it: a majority granted, or so many refused that no
// majority can (nodes that fail are waited for: too few answers is an error, not a refusal).
// A fence needs no more than a majority's counters: every agreed fence is on a majority, and
// two majorities share a node. A late node's own counter may be ahead; it was never agreed.
// A ReentrantMutex and an election hear every node before they grant (wait_all): re-entries
// return the fence each node's holding keeps, and readers of an election look for a majority
// agreeing on the term, so every granting node must carry the agreed one.
bool round1_decided(const std::vector<NodeReplies>& results, bool fenced, bool wait_all) {
    const int n = static_cast<int>(results.size());
    const int q = majority(n);
    int granted = 0;
    int refused = 0;
    for (const auto& r : results) {
        if (!r.arrived || !r.status.ok() || r.replies.front().is_error()) continue;
        AttemptOutcome o;
        if (!parse_acquire(r.replies.front(), o, fenced).ok()) continue;
        ++(o.acquired ? granted : refused);
    }
    return (granted >= q && !wait_all) || refused >= std::max(n - q + 1, q);
}

// Round 2's call on the nodes that granted: one fence per lock above every counter seen for
// it, written where the holding still stands.
OwnedCall raise_call(const RedisSpec& spec, const OwnedCall& call, const Round1& r1,
                     std::vector<std::uint64_t>& fences) {
    const std::size_t locks = r1.counters.size();
    std::string notify;  // an election tells observers once its term is agreed
    if (spec.kind->held_as == "leader") notify = spec.op_args.front();
    const std::string& fence_px = call.args[2];  // without round 1's proposal
    OwnedCall raise{&raise_fence_script(),
                    {call.keys.begin(), call.keys.begin() + static_cast<std::ptrdiff_t>(2 * locks)},
                    {call.args[0], fence_px.substr(0, fence_px.find('@')),
                     std::string(spec.kind->held_as), notify}};
    for (const auto& counters : r1.counters) {
        fences.push_back(redlock_fence(counters, 0));
        raise.args.push_back(std::to_string(fences.back()));
    }
    return raise;
}

// Whether a node took the fence round: its counter is then at least the raised fence.
bool took_raise(const NodeReplies& r) {
    return r.arrived && r.status.ok() && r.replies.front().type == Reply::Type::integer &&
           r.replies.front().integer == 1;
}

std::size_t raised(const std::vector<NodeReplies>& results) {
    return static_cast<std::size_t>(std::count_if(results.begin(), results.end(), took_raise));
}

// One attempt, on the loop: round 1 everywhere, the fence round where it was granted, and the
// give-back where it failed. Each round ends as soon as a majority decides it.
struct Attempt : std::enable_shared_from_this<Attempt> {
    ClientImpl& c;
    const std::shared_ptr<const RedisSpec> shared;  // the claim's
    const RedisSpec& spec;
    AsyncConnection::Calls call;
    std::chrono::milliseconds px;
    Clock::time_point sent_at;
    RedlockDone done;
    Round1 r1;
    std::vector<NodeReplies> round1;
    std::vector<std::uint64_t> fences;
    std::vector<bool> raise_took;  // per node: it took the fence round

    Attempt(ClientImpl& c, std::shared_ptr<const RedisSpec> spec, AsyncConnection::Calls call,
            std::chrono::milliseconds px, Clock::time_point sent_at, RedlockDone done)
        : c(c),
          shared(std::move(spec)),
          spec(*shared),
          call(std::move(call)),
          px(px),
          sent_at(sent_at),
          done(std::move(done)) {}

    Nodes& nodes() const { return *redis(c).nodes; }
    std::size_t quorum() const {
        return static_cast<std::size_t>(majority(static_cast<int>(nodes().size())));
    }
    Clock::time_point valid_until() const { return validity_deadline(sent_at, spec.ttl); }
    Clock::time_point by() const {
        return Clock::now() + node_timeout(spec.ttl, c.options.command_timeout);
    }

    void start() {
        const std::size_t locks = spec.names.empty() ? 1 : spec.names.size();
        nodes().async_everywhere(
            call, by(), {},
            [fenced = spec.fenced, all = spec.kind->held_as != "token" && nodes().fencing()](
                const auto& results) { return round1_decided(results, fenced, all); },
            [self = shared_from_this(), locks](std::vector<NodeReplies> results) {
                self->r1 = tally_round1(results, locks, self->spec.fenced);
                self->round1 = std::move(results);
                self->after_round1();
            });
    }

    void after_round1() {
        if (!r1.hard.ok() || r1.granted.size() < quorum() || c.now() >= valid_until())
            return give_up();
        AttemptOutcome out;
        out.acquired = true;
        if (!nodes().fencing() || !spec.fenced) return done({}, out);  // no fence round
        if (spec.reentry && r1.reentered >= quorum()) {
            // A majority already fenced this holding: a re-entry keeps its fence. Only when
            // the caller holds it: a stale grant of the same owner (a failed attempt's, left
            // to expire) was never fenced by a majority, so it is fenced afresh.
            out.fence = r1.reentry_fence;
            return done({}, out);
        }
        if (agreed_at_once()) return;
        auto raise = std::make_shared<std::vector<OwnedCall>>(
            1, raise_call(spec, call->front(), r1, fences));
        const std::size_t q = quorum();
        const std::size_t asked = r1.granted.size();
        nodes().async_everywhere(
            raise, by(), r1.granted,
            [q, asked](const auto& results) {
                std::size_t in = 0;
                for (const auto& r : results) in += r.arrived ? 1 : 0;
                std::size_t yes = raised(results);
                return yes >= q || in - yes > asked - q;
            },
            [self = shared_from_this()](const std::vector<NodeReplies>& results) {
                self->raise_took.assign(self->nodes().size(), false);
                for (std::size_t k = 0; k < results.size(); ++k)
                    self->raise_took[self->r1.granted[k]] = took_raise(results[k]);
                if (raised(results) < self->quorum() || self->c.now() >= self->valid_until())
                    return self->give_up();
                self->granted();
            });
    }

    // A majority took the fence round 1 proposed (on every lock): it is agreed, and round 2
    // would raise nothing.
    bool agreed_at_once() {
        if (!proposes_fence(nodes(), spec)) return false;
        std::vector<std::uint64_t> agreed;
        for (const auto& counters : r1.counters) {
            auto f = agreed_in_round1(counters, quorum());
            if (!f) return false;
            agreed.push_back(*f);
        }
        fences = std::move(agreed);
        granted();
        return true;
    }

    void granted() {
        for (auto f : fences) nodes().agreed(f);
        AttemptOutcome out;
        out.acquired = true;
        out.fence = fences.front();
        if (!spec.names.empty()) out.fences = std::move(fences);
        done({}, std::move(out));
    }

    void give_up() {
        // A node that refused holds nothing of ours: under contention most attempts end here,
        // and they cost no second round.
        if (!spec.owner.empty()) return give_back_owned();
        release_on(c, shared, call->front().args[0], px, sent_at + px, r1.maybe_ours,
                   [self = shared_from_this()](bool later) { self->refused(later); });
    }

    // A fixed owner (ReentrantMutex) gives back only the grants it saw: a release sent where
    // the answer is unknown could take back a count of the owner's other holdings if the
    // request never ran (such grants expire by themselves). Each node's give-back is bounded
    // by the fence its grant carried, or the fence round's where the node took that round
    // (its counter is then at least as high), so it spares a later grant of the owner there,
    // which draws a higher fence; a node whose fence round ran unheard holds a fence above its
    // bound: the give-back leaves that grant to expire. It goes once, never again from the
    // background (release_on's once): a re-entry's grant carries the outer holding's fence,
    // which no bound tells apart, and a give-back that ran unheard would, sent again, take the
    // outer hold there. One unheard leaves its grant to expire.
    void give_back_owned() {
        if (!spec.kind->give_back)  // a kind with no bounded give-back: its plain release
            return release_on(
                c, shared, call->front().args[0], px, sent_at + px, r1.granted,
                [self = shared_from_this()](bool later) { self->refused(later); }, std::nullopt,
                true);
        if (r1.granted.empty()) return refused(false);
        struct Join {
            std::atomic<std::size_t> left;
            std::atomic<bool> later{false};
        };
        auto join = std::make_shared<Join>();
        join->left = r1.granted.size();
        const std::uint64_t agreed =
            fences.empty() ? 0 : *std::max_element(fences.begin(), fences.end());
        auto bound = [&](std::size_t node) {
            bool took = node < raise_took.size() && raise_took[node];
            return took ? std::max(r1.fence_of[node], agreed) : r1.fence_of[node];
        };
        for (auto node : r1.granted)
            release_on(
                c, shared, call->front().args[0], px, sent_at + px, {node},
                [self = shared_from_this(), join](bool later) {
                    if (later) join->later = true;
                    if (--join->left == 0) self->refused(join->later);
                },
                bound(node), true);
    }

    void refused(bool cleanup_pending) {
        AttemptOutcome out;
        out.cleanup_pending = cleanup_pending;
        out.ticket = r1.ticket;
        if (!r1.hard.ok()) return done(r1.hard, out);
        const std::size_t q = quorum();
        if (r1.answered < q)
            return done(
                Status::error(errc::no_quorum, nodes().describe_failures(round1, r1.answered) +
                                                   ": check that the nodes are up and reachable"),
                out);
        int free_nodes = static_cast<int>(r1.answered - r1.refusals.size());
        out.pttl = redlock_wait(r1.refusals, free_nodes, static_cast<int>(nodes().size()));
        // A majority was free but the attempt still failed: contenders split the vote, or a
        // round ran out of validity. Try again soon, at a random moment.
        if (out.pttl.count() == 0) out.pttl = split_vote_delay();
        // Release messages come from the first node: free there, it has sent its message. Not
        // heard from before the refusals decided the round, it may be free too.
        out.wake_spent =
            std::find(r1.maybe_ours.begin(), r1.maybe_ours.end(), 0) != r1.maybe_ours.end();
        done({}, out);
    }
};

}  // namespace

std::string redlock_fence_px(const Nodes& nodes, const RedisSpec& spec, std::string fence_px) {
    if (proposes_fence(nodes, spec)) fence_px += "@" + std::to_string(nodes.proposal());
    return fence_px;
}

std::string_view redlock_why_not(std::string_view primitive) {
    // Redlock keeps one promise: a majority of independent nodes agrees on one holder. What
    // needs more than that is refused, with the reason.
    static const std::map<std::string_view, std::string_view> kWhyNot{
        {"FairMutex", "a FIFO queue cannot be kept in one order on independent nodes"},
        {"Semaphore",
         "permits counted on independent nodes do not add up: with N permits, N + 1 holders can "
         "each hold a majority"},
        {"PermitExpirableSemaphore",
         "permits counted on independent nodes do not add up: with N permits, N + 1 holders can "
         "each hold a majority"},
        {"RateLimiter",
         "a token bucket on independent nodes either multiplies the rate or needs every node to "
         "answer"},
        {"CountDownLatch",
         "a count kept on independent nodes diverges when a node misses a count_down"},
        {"force_unlock", "a majority of independent nodes would have to agree on an eviction"},
    };
    auto why = kWhyNot.find(primitive);
    return why == kWhyNot.end() ? std::string_view{} : why->second;
}

Status redlock_supports(const LockSpec& spec) {
    std::string_view what = spec.shape == Shape::fair      ? "FairMutex"
                            : spec.shape == Shape::permits ? "Semaphore"
                                                           : "";
    std::string_view why = what.empty() ? std::string_view{} : redlock_why_not(what);
    if (why.empty()) return {};
    return Status::error(errc::invalid_argument,
                         fmt::format("'{}' cannot be acquired as a {} over redlock://: {} ({})",
                                     spec.name, what, why, kRedlockOffers));
}

void redlock_async_attempt(ClientImpl& c, std::shared_ptr<const RedisSpec> spec,
                           const ScriptCall& call, std::chrono::milliseconds px,
                           Clock::time_point sent_at, RedlockDone done) {
    auto calls = std::make_shared<std::vector<OwnedCall>>(1, owned(call));
    std::make_shared<Attempt>(c, std::move(spec), std::move(calls), px, sent_at, std::move(done))
        ->start();
}

Status redlock_attempt(ClientImpl& c, const std::shared_ptr<const RedisSpec>& spec,
                       const ScriptCall& call, std::chrono::milliseconds px,
                       Clock::time_point sent_at, AttemptOutcome& out) {
    auto [st, o] =
        redis(c).nodes->loop().wait<std::pair<Status, AttemptOutcome>>([&](auto deliver) {
            redlock_async_attempt(c, spec, call, px, sent_at,
                                  [deliver = std::move(deliver)](Status s, AttemptOutcome x) {
                                      deliver({std::move(s), std::move(x)});
                                  });
        });
    out = std::move(o);
    return st;
}

}  // namespace deadbolt::detail
