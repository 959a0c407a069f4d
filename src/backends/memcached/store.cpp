#include "backends/memcached/store.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "backends/memcached/claim.hpp"
#include "backends/memcached/keys.hpp"
#include "backends/memcached/wire.hpp"
#include "core/quorum.hpp"

namespace deadbolt::detail {
namespace {

constexpr std::chrono::milliseconds kShortestMcTtl{2000};

}  // namespace

Status mc_keep_too_long(std::chrono::milliseconds keep, std::string_view what) {
    return Status::error(errc::invalid_argument,
                         fmt::format("{} of {} ms is longer than memcached keeps an item (30 days "
                                     "less 2 s: it reads a longer TTL as a date, long past, and "
                                     "would end the lock at once); ask for less",
                                     what, keep.count()));
}

McStore::McStore(ClientImpl& c, std::unique_ptr<McNodes> nodes,
                 std::vector<std::int64_t> server_times)
    : client_(c),
      nodes_(std::move(nodes)),
      server_times_(std::move(server_times)),
      asked_at_(Clock::now()) {
    // A broken connection may be a restart, which forgets every lock: the client checks its
    // holdings at once rather than at their next renewal.
    nodes_->on_break = [this] {
        if (on_doubt) on_doubt();
    };
}

McKeys McStore::keys(std::string_view name) const {
    return mc_keys(client_.options.key_prefix, name);
}

std::uint64_t McStore::fence_floor(std::size_t i) const {
    // The server's clock has whole seconds only: a counter lost within the second it was made
    // would come back below its fences. This client's clock adds the microseconds.
    auto since = std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - asked_at_);
    auto server = static_cast<std::uint64_t>(server_times_[i] + since.count()) * 1000000U;
    auto here = std::chrono::duration_cast<std::chrono::microseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
    return std::max(server, static_cast<std::uint64_t>(here));
}

Status McStore::supports(const LockSpec& spec) const {
    if (spec.options.ttl < kShortestMcTtl)
        return Status::error(
            errc::invalid_argument,
            fmt::format("a TTL of {} ms is too short for memcached: it keeps TTLs in whole "
                        "seconds, ended up to two seconds early, so a shorter one may end at once; "
                        "ask for 2 s or more",
                        spec.options.ttl.count()));
    // A TTL past the longest is cut to it (fitted()); lock_delay comes on top.
    const auto keep = std::min(spec.options.ttl, kLongestMcKeep) + spec.options.lock_delay;
    if (keep > kLongestMcKeep) return mc_keep_too_long(keep, "a TTL plus lock_delay");
    return keeps(spec.shape);
}

std::unique_ptr<Claim> McStore::open(const LockSpec& spec, std::stop_token cancel) {
    return std::make_unique<McClaim>(*this, spec, std::move(cancel));
}

std::vector<Verdict> McStore::extend(std::span<const Renewal> rs, Clock::time_point by) {
    // An extension memcached would read as a date is refused before it is sent: the server
    // would answer STORED and end the lock at once.
    std::vector<Verdict> out(rs.size());
    std::vector<const Holding*> hs;
    std::vector<std::chrono::milliseconds> keeps;
    std::vector<std::size_t> sent;
    for (std::size_t i = 0; i < rs.size(); ++i) {
        if (rs[i].keep > kLongestMcKeep) {
            out[i] =
                Verdict::unknown(mc_keep_too_long(rs[i].keep, "an extension (with lock_delay)"));
            continue;
        }
        hs.push_back(rs[i].holding);
        keeps.push_back(rs[i].keep);
        sent.push_back(i);
    }
    if (hs.empty()) return out;
    auto verdicts = on_holdings(Op::extend, hs, keeps, by);
    for (std::size_t k = 0; k < sent.size(); ++k) out[sent[k]] = std::move(verdicts[k]);
    return out;
}

std::vector<Verdict> McStore::release(std::span<const Holding* const> hs, Clock::time_point by) {
    if (hs.size() == 1) return {release_one(*hs.front(), by)};
    return on_holdings(Op::release, hs, {}, by);
}

std::vector<Verdict> McStore::check(std::span<const Holding* const> hs, Clock::time_point by) {
    return on_holdings(Op::check, hs, {}, by);
}

Clock::time_point McStore::deadline_for(std::chrono::milliseconds ttl) const {
    if (one()) return deadline();
    return Clock::now() + node_timeout(ttl, client_.options.command_timeout);
}

std::chrono::milliseconds McStore::longest_ttl() const {
    return kLongestMcKeep;
}

Status McStore::keeps(Shape shape) const {
    switch (shape) {
        case Shape::exclusive:
        case Shape::multi:
            return {};
        case Shape::reentrant:
            return one() ? Status{} : refusal("ReentrantMutex");
        case Shape::permits:
            return one() ? Status{} : refusal("Semaphore");
        case Shape::fair:
            return refusal("FairMutex");
        case Shape::read:
        case Shape::write:
            return refusal("RWLock");
        case Shape::leader:
            return refusal("LeaderElection");
    }
    return {};
}

Status McStore::refusal(std::string_view what) const {
    std::string why;
    if (what == "FairMutex")
        why = "memcached keeps no queue of waiters, so it cannot serve them in order";
    else if (what == "RWLock")
        why = "memcached keeps no shared mode beside an exclusive one";
    else if (what == "LeaderElection")
        why = "memcached cannot tell observers that a leader changed";
    else if (what == FencedData::kWhat || what == HeldWrites::kWhat)
        why =
            "an item memcached evicts or forgets at a restart would take its fence with it, so "
            "it cannot refuse a stale writer";
    else if (!one())
        why = fmt::format("it counts on one server, and this client decides by a majority of {}",
                          nodes_->size());
    else
        why = "memcached cannot keep it";
    return Status::error(
        errc::invalid_argument,
        fmt::format("{} is not offered on memcached: {}; the README's "
                    "table of primitives says which engines offer it{}",
                    what, why, one() ? "" : " (memcached:// with one server is one)"));
}

Status McStore::ping() {
    std::vector<McRequest> reqs(nodes_->size(), McRequest{"mn\r\n", 1});
    auto answers = nodes_->round(reqs, deadline());
    int ok = 0;
    Status why;
    for (auto& a : answers) {
        if (a.status.ok())
            ++ok;
        else if (why.ok())
            why = a.status;
    }
    if (ok >= majority(static_cast<int>(nodes_->size()))) return {};
    return why;
}

}  // namespace deadbolt::detail
