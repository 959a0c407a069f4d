#include "backends/etcd/claim.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "backends/etcd/keys.hpp"

namespace deadbolt::detail {
namespace {

// Looks in one attempt: a contender ahead of ours can vanish between our reads; a few tries
// settle it, else the wake-up's look sorts it out.
constexpr int kLooks = 3;

void first_contenders(etcdserverpb::RequestOp* op, const std::string& dir, std::size_t n) {
    auto* r = op->mutable_request_range();
    r->set_key(dir);
    r->set_range_end(range_end(dir));
    r->set_sort_target(etcdserverpb::RangeRequest::CREATE);
    r->set_sort_order(etcdserverpb::RangeRequest::ASCEND);
    r->set_limit(static_cast<std::int64_t>(n));
}

}  // namespace

EtcdClaim::EtcdClaim(EtcdStore& store, const LockSpec& spec, std::stop_token cancel)
    : store_(store),
      spec_(spec),
      cancel_(std::move(cancel)),
      dir_(lock_dir(store.client().options.key_prefix, spec.name)) {
    // Threads of this process queue locally for a lock; permits are held by many at once.
    if (spec.shape != Shape::permits) traits_.local_line = dir_;
    traits_.abandons = true;      // our key keeps our place: drop it when we give up
    traits_.expiry_wakes = true;  // a holder's expiry deletes its key: the watch sees it
}

EtcdClaim::~EtcdClaim() {
    disarm();
    for (auto& [token, p] : places_)
        if (p.own) p.lease->background = false;
}

EtcdClaim::Place* EtcdClaim::place_for(const std::string& token, Status& st) {
    auto by = store_.deadline();
    auto it = places_.find(token);
    if (it != places_.end() && !it->second.lease->dead(Clock::now())) return &it->second;
    // A first place shares the client's session, as concurrency.Mutex does. A holding that
    // must expire by itself, a retry after a lost reply (whose cleanup owns the old key), a
    // second claim of this client on the name, or a key whose lease died gets a lease of
    // its own.
    const auto& o = spec_.options;
    bool share = places_.empty() && o.auto_renew && o.max_hold.count() == 0;
    if (it != places_.end()) places_.erase(it);
    for (auto& [t, p] : places_)
        if (p.own) p.lease->background = false;  // abandoned: its cleanup revokes it
    Place p;
    if (share) {
        if (st = store_.leases().shared(o.ttl, by, p.lease); !st.ok()) return nullptr;
        p.key = contender_key(dir_, p.lease->id);
        p.reservation = store_.reserve(p.key);
    }
    if (!p.reservation) {
        if (st = store_.leases().own(o.ttl, by, p.lease); !st.ok()) return nullptr;
        p.own = true;
        p.lease->background = true;  // kept while we wait; renewals keep it once held
        p.key = contender_key(dir_, p.lease->id);
        p.reservation = store_.reserve(p.key);
    }
    return &places_.emplace(token, std::move(p)).first->second;
}

void EtcdClaim::attempt(const std::string& token, std::chrono::milliseconds /*keep*/, Attempted& a,
                        Fences& f) {
    current_ = token;
    Place* p = place_for(token, a.status);
    if (!p) return;
    a.status = look(*p, a, f);
    if (!a.status.ok() && a.status.detail.find("lease not found") != std::string::npos) {
        p->lease->gone = true;  // revoked from outside: our key went with it
        if ((p = place_for(token, a.status))) a.status = look(*p, a, f);
    }
}

Status EtcdClaim::look(Place& p, Attempted& a, Fences& f) {
    EtcdChannel& ch = store_.channel();
    // The first `n` contenders hold: a semaphore's permits, else one.
    const auto n = static_cast<std::size_t>(spec_.shape == Shape::permits ? spec_.permits : 1);
    for (int round = 0; round < kLooks; ++round) {
        etcdserverpb::TxnRequest txn;
        auto* cmp = txn.add_compare();
        cmp->set_result(etcdserverpb::Compare::EQUAL);
        cmp->set_target(etcdserverpb::Compare::CREATE);
        cmp->set_key(p.key);
        cmp->set_create_revision(0);
        auto* put = txn.add_success()->mutable_request_put();
        put->set_key(p.key);
        // A candidate's proclamation; else our token, which names our host and process for
        // `status` and a permit's id (etcd's concurrency.Mutex ignores the value).
        put->set_value(spec_.shape == Shape::leader ? spec_.value : current_);
        put->set_lease(p.lease->id);
        first_contenders(txn.add_success(), dir_, n);
        txn.add_failure()->mutable_request_range()->set_key(p.key);
        first_contenders(txn.add_failure(), dir_, n);
        etcdserverpb::TxnResponse r;
        if (Status st =
                ch.call([&](grpc::ClientContext& c) { return ch.kv().Txn(&c, txn, &r); },
                        store_.deadline(), fmt::format("acquiring '{}'", spec_.name), Sent::write);
            !st.ok())
            return st;
        if (r.succeeded()) {
            p.rev = r.header().revision();
        } else {
            const auto& mine = r.responses(0).response_range();
            if (mine.kvs_size() == 0 || mine.kvs(0).lease() != p.lease->id)
                return Status::error(errc::wrong_type,
                                     fmt::format("etcd key '{}' exists but is not on this "
                                                 "client's lease: something else wrote it",
                                                 p.key));
            p.rev = mine.kvs(0).create_revision();
        }
        std::vector<mvccpb::KeyValue> first;
        std::int64_t seen = r.header().revision();
        for (const auto& kv : r.responses(1).response_range().kvs())
            if (is_contender(dir_, kv.key())) first.push_back(kv);
        if (first.size() < n && r.responses(1).response_range().more())  // longer names' keys
            if (Status st = store_.contenders(dir_, 0, true, n, first, seen); !st.ok()) return st;
        bool in = std::any_of(first.begin(), first.end(),
                              [&](const auto& kv) { return kv.create_revision() == p.rev; });
        if (in) {
            a.acquired = true;
            a.kept_from = p.lease->kept_from();
            // Shared holdings carry no fence (ARCHITECTURE 15); a lock's is its revision.
            f.fence = n == 1 ? static_cast<std::uint64_t>(p.rev) : 0;
            if (p.own) p.lease->background = false;  // renewals keep it now, or nothing does
            return {};
        }
        a.pttl = std::chrono::milliseconds(-1);  // an expiry is announced like a release
        if (n > 1) {
            // Any holder ahead may leave first: wake at any deletion under the name.
            std::lock_guard lk(m_);
            ahead_ = dir_;
            ahead_end_ = range_end(dir_);
            ahead_seen_ = seen;
        } else {
            std::vector<mvccpb::KeyValue> ahead;
            if (Status st = store_.contenders(dir_, p.rev - 1, false, 1, ahead, seen); !st.ok())
                return st;
            if (ahead.empty()) continue;  // the one ahead just left: look again
            std::lock_guard lk(m_);
            ahead_ = ahead.front().key();
            ahead_end_.clear();
            ahead_seen_ = seen;
        }
        watch_ahead();
        return {};
    }
    // Contenders keep leaving under us: report a refusal with nothing to watch; the
    // wake-up then fires at once and the next attempt looks again.
    a.pttl = std::chrono::milliseconds(-1);
    std::lock_guard lk(m_);
    ahead_.clear();
    return {};
}

std::shared_ptr<Holding> EtcdClaim::waiter(const std::string& token,
                                           std::chrono::milliseconds /*keep*/) const {
    auto h = std::make_shared<EtcdHolding>();
    auto it = places_.find(token);
    if (it == places_.end()) return h;  // never placed: nothing to drop
    h->key = it->second.key;
    h->lease = it->second.lease;
    h->rev = it->second.rev;
    h->own_lease = it->second.own;
    h->reservation = it->second.reservation;
    h->watches = store_.watches();
    return h;
}

std::shared_ptr<Holding> EtcdClaim::holding(const std::string& token,
                                            std::chrono::milliseconds keep) const {
    auto h = waiter(token, keep);
    auto* e = static_cast<EtcdHolding*>(h.get());
    if (e->rev > 0) store_.watch_own(*e);
    if (e->rev > 0 && spec_.shape == Shape::leader)
        store_.add_term(token, std::static_pointer_cast<EtcdHolding>(h));
    return h;
}

Status EtcdClaim::arm(Clock::time_point /*until*/) {
    {
        std::lock_guard lk(m_);
        armed_ = true;
    }
    watch_ahead();
    return {};
}

void EtcdClaim::watch_ahead() {
    std::string key, end;
    std::int64_t from = 0, old = 0;
    {
        std::lock_guard lk(m_);
        if (!armed_) return;
        if (ahead_.empty()) {
            woken_ = true;  // nothing to wait for: look again
            cv_.notify_all();
            return;
        }
        if (watching_ == ahead_) return;
        key = ahead_;
        end = ahead_end_;
        from = ahead_seen_ + 1;
        old = watch_id_;
        watch_id_ = 0;
        watching_ = key;
    }
    if (old) store_.watches()->cancel(old);
    auto id = store_.watches()->on_delete(key, end, from, [this] { woke(); });
    std::lock_guard lk(m_);
    if (watching_ == key && watch_id_ == 0) watch_id_ = id;  // else it fired already
}

void EtcdClaim::woke() {
    std::function<void()> then;
    {
        std::lock_guard lk(m_);
        woken_ = true;
        watching_.clear();
        watch_id_ = 0;
        then = std::move(async_woken_);
        async_woken_ = nullptr;
    }
    cv_.notify_all();
    if (then) store_.client().loop().post(std::move(then));
}

void EtcdClaim::disarm() noexcept {
    std::int64_t id = 0;
    {
        std::lock_guard lk(m_);
        armed_ = false;
        id = watch_id_;
        watch_id_ = 0;
        watching_.clear();
    }
    if (id) store_.watches()->cancel(id);
}

void EtcdClaim::wait(Clock::time_point until) {
    std::stop_callback wake(cancel_, [this] {  // before the lock: it may run at once
        std::lock_guard g(m_);
        cv_.notify_all();
    });
    std::unique_lock lk(m_);
    cv_.wait_until(lk, until, [&] { return woken_ || cancel_.stop_requested(); });
    woken_ = false;
}

void EtcdClaim::async_wait(std::function<void()> woken) {
    {
        std::lock_guard lk(m_);
        if (!woken_) {
            async_woken_ = std::move(woken);
            return;
        }
        woken_ = false;
    }
    store_.client().loop().post(std::move(woken));
}

void EtcdClaim::cancel_wait() noexcept {
    std::lock_guard lk(m_);
    async_woken_ = nullptr;
}

}  // namespace deadbolt::detail
