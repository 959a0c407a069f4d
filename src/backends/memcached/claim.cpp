#include "backends/memcached/claim.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <condition_variable>
#include <mutex>
#include <random>

#include "core/backoff.hpp"
#include "core/quorum.hpp"

namespace deadbolt::detail {
namespace {

std::uint64_t counter_of(const MetaReply& r) {
    if (r.code != "VA") return 0;
    if (auto v = decimal(r.value); v && *v >= 0) return static_cast<std::uint64_t>(*v);
    std::uint64_t v = 0;  // past an int64, or not wholly a number: what begins it
    std::from_chars(r.value.data(), r.value.data() + r.value.size(), v);
    return v;
}

}  // namespace

McClaim::McClaim(McStore& store, const LockSpec& spec, std::stop_token cancel)
    : store_(store), spec_(spec), cancel_(std::move(cancel)) {
    if (spec.shape == Shape::multi) {
        for (const auto& n : spec.names) keys_.push_back(store.keys(n));
    } else {
        keys_.push_back(store.keys(spec.name));
    }
    std::vector<std::string> locks;
    for (const auto& k : keys_) {
        locks.push_back(k.lock());
        fences_.push_back(k.fence());
    }
    locks_ = std::make_shared<const std::vector<std::string>>(std::move(locks));
    if (spec.shape == Shape::exclusive || spec.shape == Shape::multi) {
        std::string line = "memcached:";
        for (const auto& l : *locks_) line.append(l) += '\n';
        traits_.local_line = std::make_shared<const std::string>(std::move(line));
    }
}

std::shared_ptr<McHolding> McClaim::made(const std::string& token, McKeyList keys) {
    bool reentrant = spec_.shape == Shape::reentrant;
    auto h = std::make_shared<McHolding>(std::move(keys), reentrant ? "" : token,
                                         reentrant ? token : "", store_.nodes().size());
    grants_.put(token, h);
    return h;
}

bool McClaim::recycle() noexcept {
    grants_.clear();
    looks_ = 0;
    refused_ = false;
    return true;
}

void McClaim::reopen(const std::stop_token& cancel) {
    cancel_ = cancel;
}

void McClaim::attempt(const std::string& token, std::chrono::milliseconds keep, Attempted& a,
                      Fences& f) {
    switch (spec_.shape) {
        case Shape::reentrant:
            return reenter(token, keep, a, f);
        case Shape::permits:
            return take_permit(token, keep, a);
        default:
            return add(token, keep, a, f);
    }
}

bool McClaim::still_held(Attempted& a) {
    McNodes& nodes = store_.nodes();
    const std::size_t n = nodes.size();
    if (look_reqs_.empty()) {  // the same look every time
        look_reqs_.resize(n);
        for (std::size_t i = 0; i < n; ++i)
            for (const auto& l : *locks_) {
                append_meta(look_reqs_[i].text, "mg", l, "t");
                ++look_reqs_[i].replies;
            }
    }
    auto& answers = looked_;
    nodes.round(look_reqs_, store_.deadline_for(spec_.options.ttl), answers);
    int free = 0;
    std::int64_t left = -1;
    for (const auto& ans : answers) {
        if (!ans.status.ok()) continue;  // the attempt will say what is wrong
        bool all = true;
        for (const auto& r : ans.replies) {
            if (r.code != "EN") all = false;
            if (r.code == "HD") left = std::max(left, r.number('t').value_or(-1));
        }
        free += all ? 1 : 0;
    }
    if (free >= majority(static_cast<int>(n))) return false;
    bool answered = false;
    for (const auto& ans : answers) answered = answered || ans.status.ok();
    if (!answered) return false;
    a.pttl = std::chrono::milliseconds(n == 1 && left >= 0 ? left * 1000 : -1);
    return true;
}

void McClaim::add(const std::string& token, std::chrono::milliseconds keep, Attempted& a,
                  Fences& f) {
    // A waiter looks with one read per name until the lock is free, and adds only then: a
    // waiting look costs one command, not the attempt's three.
    if (refused_ && still_held(a)) return;
    refused_ = false;
    McNodes& nodes = store_.nodes();
    const std::size_t n = nodes.size();
    const auto t = ttl_seconds(keep.count());
    auto& reqs = reqs_;
    clear_requests(reqs, n);
    // Per name: the add, a read of what the name holds now (the CAS of ours, or the holder's
    // TTL), and the fence drawn after the add (a refusal draws one too, which only skips it).
    // Written in place into one text per server: temporaries were a tenth of a cycle.
    std::string& draw = draw_;  // its room kept: "N0 J<floor> v" is past a string's own
    std::size_t size = 0;
    for (std::size_t k = 0; k < keys_.size(); ++k)
        size += 2 * (*locks_)[k].size() + fences_[k].size() + token.size() + 96;
    for (std::size_t i = 0; i < n; ++i) {
        reqs[i].text.reserve(size);
        draw.assign("N0 ");
        append_flag(draw, 'J', store_.fence_floor(i));
        draw += " v";
        for (std::size_t k = 0; k < keys_.size(); ++k) {
            append_classic_store(reqs[i].text, (*locks_)[k], t, token);
            append_meta(reqs[i].text, "mg", (*locks_)[k], "v c t");
            append_meta(reqs[i].text, "ma", fences_[k], draw);
            reqs[i].replies += 3;
        }
    }
    auto h = made(token, locks_);
    std::int64_t wait_s = -1;  // the longest a refusing holder has left
    auto& answers = answers_;
    nodes.round(reqs, store_.deadline_for(spec_.options.ttl), answers);
    int granted = 0, failed = 0;
    bool wrote = false;  // some server took some name (a MultiLock's partial grant)
    Status fail;
    auto& got = got_;
    got.assign(n, false);
    auto& counters = counters_;
    counters.assign(n * keys_.size(), 0);
    for (std::size_t i = 0; i < n; ++i) {
        if (!answers[i].status.ok()) {
            ++failed;
            if (fail.ok()) fail = answers[i].status;
            continue;
        }
        bool all = true;
        for (std::size_t k = 0; k < keys_.size(); ++k) {
            const auto& added = answers[i].replies[3 * k];
            const auto& now = answers[i].replies[3 * k + 1];
            if (added.code == "STORED") wrote = true;
            if (added.code == "STORED" && now.code == "VA" && now.value == token) {
                h->set_cas(i, k, static_cast<std::uint64_t>(now.number('c').value_or(0)));
            } else {
                all = false;
                if (now.code == "VA") wait_s = std::max(wait_s, now.number('t').value_or(-1));
            }
            counters[i * keys_.size() + k] = counter_of(answers[i].replies[3 * k + 2]);
        }
        got[i] = all;
        granted += all ? 1 : 0;
    }
    const int q = majority(static_cast<int>(n));
    if (granted >= q) {
        auto& fences = drawn_;
        fences.assign(keys_.size(), 0);
        for (std::size_t k = 0; k < keys_.size(); ++k)
            for (std::size_t i = 0; i < n; ++i)
                if (got[i])
                    fences[k] =
                        std::max(fences[k], counters[i * keys_.size() + k] + (n > 1 ? 1 : 0));
        Status raised = n > 1 ? raise_fences(counters, got, fences) : Status{};
        if (raised.ok()) {
            a.acquired = true;
            f.fence = fences.front();
            if (spec_.shape == Shape::multi) {
                f.each = fences;
                f.fence = 0;
                for (auto x : fences) f.fence = std::max(f.fence, x);
            }
            return;
        }
        fail = std::move(raised);
        failed = static_cast<int>(n);
    }
    // Not ours: undo what this attempt wrote (by its CAS, or found by its token where a reply
    // was lost), so that it does not hold the lock from others until its TTL.
    if (wrote || failed > 0) {
        const Holding* one = h.get();
        auto undone = store_.on_holdings(McStore::Op::release, {&one, 1}, {}, store_.deadline());
        if (undone.front().is == Verdict::Is::unknown && !fail.ok()) {
            a.status = fail;  // the core cleans up what may be left
            return;
        }
    }
    if (granted + failed < q || fail.ok()) {
        refused_ = true;
        // When the holder's item expires, on one server; several may differ: look by backoff.
        a.pttl = std::chrono::milliseconds(n == 1 && wait_s >= 0 ? wait_s * 1000 : -1);
        return;
    }
    a.status = fail.ec == make_error_code(errc::unknown_outcome)
                   ? Status::error(errc::connection_lost, fail.detail + " (nothing is held)")
                   : fail;
}

Status McClaim::raise_fences(const std::vector<std::uint64_t>& counters,
                             const std::vector<bool>& granted,
                             const std::vector<std::uint64_t>& fences) {
    McNodes& nodes = store_.nodes();
    std::vector<McRequest> reqs(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (!granted[i]) continue;
        for (std::size_t k = 0; k < keys_.size(); ++k) {
            const std::uint64_t was = counters[i * keys_.size() + k];
            const std::uint64_t up = fences[k] > was ? fences[k] - was : 0;
            reqs[i].text +=
                meta_request("ma", fences_[k], fmt::format("N0 J{} D{} v", fences[k], up));
            ++reqs[i].replies;
        }
    }
    auto answers = nodes.round(reqs, store_.deadline_for(spec_.options.ttl));
    int raised = 0;
    Status why;
    for (const auto& ans : answers) {
        if (!ans.asked) continue;
        bool all = ans.status.ok();
        for (const auto& r : ans.replies) all = all && (r.code == "VA" || r.code == "HD");
        raised += all ? 1 : 0;
        if (!ans.status.ok() && why.ok()) why = ans.status;
    }
    if (raised >= majority(static_cast<int>(nodes.size()))) return {};
    return Status::error(errc::no_quorum,
                         fmt::format("lock '{}': fewer than a majority of the memcached servers "
                                     "took the grant's fence{}{}",
                                     spec_.name, why.ok() ? "" : ": ", why.detail));
}

void McClaim::reenter(const std::string& token, std::chrono::milliseconds keep, Attempted& a,
                      Fences& f) {
    McNodes& nodes = store_.nodes();
    const std::string& key = locks_->front();
    const auto t = ttl_seconds(keep.count());
    auto h = made(token, locks_);
    auto by = store_.deadline();
    for (int look = 0; look < 4; ++look) {
        auto read = nodes.one(0, {meta_request("mg", key, "v c t"), 1}, by);
        if (a.status = read.status; !a.status.ok()) return;
        const MetaReply& r = read.replies.front();
        std::uint64_t fence = 0;
        std::string write;
        if (r.code == "EN") {
            auto drawn = nodes.one(0,
                                   {meta_request("ma", fences_.front(),
                                                 fmt::format("N0 J{} v", store_.fence_floor(0))),
                                    1},
                                   by);
            if (a.status = drawn.status; !a.status.ok()) return;
            fence = counter_of(drawn.replies.front());
            write = classic_store(key, t, mc_reentrant_value(fence, 1, token));
        } else {
            auto held = mc_parse_reentrant(r.value);
            if (!held || held->owner != token) {
                auto left = r.number('t').value_or(-1);
                a.pttl = std::chrono::milliseconds(left < 0 ? -1 : left * 1000);
                return;
            }
            auto cas = static_cast<std::uint64_t>(r.number('c').value_or(0));
            if (spec_.leftover_is_new) {
                // Ours, yet this client holds none: a grant whose reply was lost. It goes,
                // and this attempt takes a holding of its own.
                auto gone = nodes.one(0, {meta_request("md", key, fmt::format("C{}", cas)), 1}, by);
                if (a.status = gone.status; !a.status.ok()) return;
                continue;
            }
            fence = held->fence;
            write = classic_store(key, std::max(t, r.number('t').value_or(t)),
                                  mc_reentrant_value(fence, held->holds + 1, token), cas);
        }
        auto wrote = nodes.one(0, {write + meta_request("mg", key, "v c"), 2}, by);
        if (a.status = wrote.status; !a.status.ok()) return;
        const MetaReply& w = wrote.replies.front();
        if (w.code == "STORED") {
            const MetaReply& now = wrote.replies[1];
            auto held = now.code == "VA" ? mc_parse_reentrant(now.value) : std::nullopt;
            if (held && held->owner == token)
                h->set_cas(0, 0, static_cast<std::uint64_t>(now.number('c').value_or(0)));
            h->set_fence(fence);
            a.acquired = true;
            f.fence = fence;
            return;
        }
    }
    a.pttl = std::chrono::milliseconds(-1);  // it kept changing under us: look again later
}

void McClaim::take_permit(const std::string& token, std::chrono::milliseconds keep, Attempted& a) {
    McNodes& nodes = store_.nodes();
    const int permits = spec_.permits;
    const auto t = ttl_seconds(keep.count());
    auto by = store_.deadline();
    auto try_slot = [&](int slot) -> bool {
        auto h = made(
            token, std::make_shared<const std::vector<std::string>>(1, keys_.front().slot(slot)));
        const std::string& key = h->keys.front();
        auto r =
            nodes.one(0, {classic_store(key, t, token) + meta_request("mg", key, "v c"), 2}, by);
        if (a.status = r.status; !a.status.ok()) return true;
        if (r.replies.front().code != "STORED") return false;
        if (r.replies[1].code == "VA" && r.replies[1].value == token)
            h->set_cas(0, 0, static_cast<std::uint64_t>(r.replies[1].number('c').value_or(0)));
        a.acquired = true;
        return true;
    };
    // A random slot first: free at once when few are held.
    thread_local std::minstd_rand rng(static_cast<unsigned>(random_seed()));
    int first = static_cast<int>(rng() % static_cast<unsigned>(permits));
    if (try_slot(first)) return;
    // Then the slots found free, looked at in one round trip, tried from a random one.
    McRequest scan;
    for (int i = 0; i < permits; ++i) {
        scan.text += meta_request("mg", keys_.front().slot(i), "");
        ++scan.replies;
    }
    auto seen = nodes.one(0, scan, by);
    if (a.status = seen.status; !a.status.ok()) return;
    std::vector<int> free;
    for (int i = 0; i < permits; ++i)
        if (i != first && seen.replies[static_cast<std::size_t>(i)].code == "EN") free.push_back(i);
    std::shuffle(free.begin(), free.end(), rng);
    for (std::size_t i = 0; i < free.size() && i < 3; ++i)
        if (try_slot(free[i])) return;
    a.pttl = std::chrono::milliseconds(-1);
}

std::shared_ptr<Holding> McClaim::holding(const std::string& token,
                                          std::chrono::milliseconds /*keep*/,
                                          std::uint64_t /*fence*/) const {
    if (auto h = grants_.find(token)) return h;
    bool reentrant = spec_.shape == Shape::reentrant;
    return std::make_shared<McHolding>(locks_, reentrant ? "" : token, reentrant ? token : "",
                                       store_.nodes().size());
}

void mc_nap(unsigned look, Clock::time_point until, std::stop_token stop) {
    auto end = std::min(until, Clock::now() + jittered_backoff(look, kFirstLook, kLongestLook));
    std::mutex m;
    std::condition_variable_any cv;
    std::unique_lock lock(m);
    cv.wait_until(lock, std::move(stop), end, [] { return false; });
}

void McClaim::wait(Clock::time_point until) {
    mc_nap(looks_++, until, cancel_);
}

}  // namespace deadbolt::detail
