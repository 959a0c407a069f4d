#include "backends/etcd/claim.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "backends/etcd/keys.hpp"
#include "backends/etcd/txn.hpp"

namespace deadbolt::detail {
EtcdClaim::EtcdClaim(EtcdStore& store, const LockSpec& spec, std::stop_token cancel)
    : store_(store),
      spec_(spec),
      cancel_(std::move(cancel)),
      dir_(lock_dir(store.client().options.key_prefix,
                    spec.shape == Shape::multi ? spec.names.at(0) : spec.name)) {
    for (const auto& name : spec.names)
        dirs_.push_back(lock_dir(store.client().options.key_prefix, name));
    // Threads of this process queue locally for a lock; permits and reads are held by many,
    // and a reentrant lock's holder may come again while it holds.
    if (spec.shape != Shape::permits && spec.shape != Shape::read &&
        spec.shape != Shape::reentrant && spec.shape != Shape::multi)
        traits_.local_line = std::make_shared<const std::string>(dir_);
    traits_.abandons = true;      // our key keeps our place: drop it when we give up
    traits_.expiry_wakes = true;  // a holder's expiry deletes its key: the watch sees it
    // A key on the client's session outlives any TTL: a lost grant's, or an abandoned
    // waiter's, must be deleted however long the cluster takes to answer (a leader election),
    // or it holds the lock for every client until this one exits.
    traits_.strays_live_on = true;
}

EtcdClaim::~EtcdClaim() {
    disarm();
    for (auto& [token, p] : places_)
        if (p.own) p.lease->background = false;
}

std::string EtcdClaim::key_for(std::int64_t lease) const {
    return spec_.shape == Shape::read ? reader_key(dir_, lease) : contender_key(dir_, lease);
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
    // A reentrant key lives on a lease of its own: other clients of its owner may hold through
    // it after this one is gone.
    bool share = places_.empty() && o.auto_renew && o.max_hold.count() == 0 &&
                 spec_.shape != Shape::reentrant;
    if (it != places_.end()) places_.erase(it);
    for (auto& [t, p] : places_)
        if (p.own) p.lease->background = false;  // abandoned: its cleanup revokes it
    Place p;
    auto keys_on = [&](Place& on) {
        on.key = key_for(on.lease->id);
        on.more.clear();
        for (std::size_t i = 1; i < dirs_.size(); ++i)
            on.more.push_back(contender_key(dirs_[i], on.lease->id));
        std::vector<std::string> all{on.key};
        all.insert(all.end(), on.more.begin(), on.more.end());
        on.reservation = store_.reserve(all);
    };
    if (share) {
        if (st = store_.leases().shared(o.ttl, by, p.lease); !st.ok()) return nullptr;
        keys_on(p);
    }
    if (!p.reservation) {
        if (st = store_.leases().own(o.ttl, by, p.lease); !st.ok()) return nullptr;
        p.own = true;
        p.lease->background = true;  // kept while we wait; renewals keep it once held
        keys_on(p);
    }
    return &places_.emplace(token, std::move(p)).first->second;
}

void EtcdClaim::attempt(const std::string& token, std::chrono::milliseconds /*keep*/, Attempted& a,
                        Fences& f) {
    current_ = token;
    if (spec_.shape == Shape::reentrant) {
        bool joined = false;
        if (a.status = join(token, a, f, joined); !a.status.ok() || joined) return;
    }
    Place* p = place_for(token, a.status);
    if (!p) return;
    auto look_in = [&](Place& in) {
        return spec_.shape == Shape::multi ? look_all(in, a, f) : look(in, a, f);
    };
    a.status = look_in(*p);
    if (!a.status.ok() && a.status.detail.find("lease not found") != std::string::npos) {
        p->lease->gone = true;  // revoked from outside: our key went with it
        if ((p = place_for(token, a.status))) a.status = look_in(*p);
    }
}

std::size_t EtcdClaim::holders() const {
    // The first `n` contenders hold: a semaphore's permits, else one.
    return static_cast<std::size_t>(spec_.shape == Shape::permits ? spec_.permits : 1);
}

etcdserverpb::TxnRequest EtcdClaim::look_txn(const Place& p) const {
    etcdserverpb::TxnRequest txn;
    require(txn, p.key, etcdserverpb::Compare::CREATE, 0);
    auto* put = txn.add_success()->mutable_request_put();
    put->set_key(p.key);
    // A candidate's proclamation; else our token, which names our host and process for
    // `status` and a permit's id (etcd's concurrency.Mutex ignores the value).
    put->set_value(spec_.shape == Shape::leader      ? spec_.value
                   : spec_.shape == Shape::reentrant ? reentrant_value(1, spec_.owner)
                                                     : current_);
    put->set_lease(p.lease->id);
    first_contenders(txn.add_success(), dir_, holders());
    txn.add_failure()->mutable_request_range()->set_key(p.key);
    first_contenders(txn.add_failure(), dir_, holders());
    return txn;
}

Status EtcdClaim::look(Place& p, Attempted& a, Fences& f) {
    for (int round = 0; round < kLooks; ++round) {
        etcdserverpb::TxnResponse r;
        if (Status st =
                store_.channel().txn(look_txn(p), r, store_.deadline(),
                                     fmt::format("acquiring '{}'", spec_.name), Sent::write);
            !st.ok())
            return st;
        bool again = false;
        if (Status st = settle(p, r, a, f, again); !st.ok() || !again) return st;
    }
    nothing_ahead(a);
    return {};
}

void EtcdClaim::nothing_ahead(Attempted& a) {
    // Contenders keep leaving under us: report a refusal with nothing to watch; the
    // wake-up then fires at once and the next attempt looks again.
    a.pttl = std::chrono::milliseconds(-1);
    std::lock_guard lk(m_);
    ahead_.clear();
}

Status EtcdClaim::settle(Place& p, const etcdserverpb::TxnResponse& r, Attempted& a, Fences& f,
                         bool& again) {
    const auto n = holders();
    if (r.succeeded()) {
        p.rev = r.header().revision();
    } else {
        const auto& mine = r.responses(0).response_range();
        if (mine.kvs_size() == 0 || mine.kvs(0).lease() != p.lease->id)
            return Status::error(errc::wrong_type,
                                 fmt::format("etcd key '{}' exists but is not on this client's "
                                             "lease: something else wrote it",
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
    std::string writer;  // a reader's: the nearest writer ahead of it
    if (!in && spec_.shape == Shape::read) {
        if (Status st = nearest_writer(p.rev, writer, seen); !st.ok()) return st;
        in = writer.empty();  // only readers ahead: they share with us
    }
    if (in) {
        a.acquired = true;
        a.kept_from = p.lease->kept_from();
        // Shared holdings carry no fence (ARCHITECTURE 15); a lock's is its revision.
        f.fence = n == 1 && spec_.shape != Shape::read ? static_cast<std::uint64_t>(p.rev) : 0;
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
    } else if (spec_.shape == Shape::read) {
        std::lock_guard lk(m_);  // readers ahead share with us: only a writer keeps us out
        ahead_ = writer;
        ahead_end_.clear();
        ahead_seen_ = seen;
    } else {
        Status st;
        if (!wait_behind(dir_, p.rev, st)) {
            again = st.ok();  // the one ahead just left: look again
            return st;
        }
    }
    watch_ahead();
    return {};
}

void EtcdClaim::async_attempt(const std::string& token, std::chrono::milliseconds keep,
                              Attempted& a, Fences& f, std::function<void()> done) {
    // One Txn decides an uncontended grant: it goes out without holding the loop. What may
    // need more (a reentrant owner's join, a MultiLock, a refusal's reads) runs as attempt().
    if (spec_.shape == Shape::reentrant || spec_.shape == Shape::multi) {
        Claim::async_attempt(token, keep, a, f, std::move(done));
        return;
    }
    current_ = token;
    Place* p = place_for(token, a.status);  // blocks only for a lease's first grant
    if (!p) {
        done();
        return;
    }
    auto post = store_.client().loop().poster();
    store_.channel().async_txn(
        look_txn(*p), store_.deadline(), fmt::format("acquiring '{}'", spec_.name), Sent::write,
        [this, post, token, keep, &a, &f, done = std::move(done)](
            Status st, std::shared_ptr<etcdserverpb::TxnResponse> r) mutable {
            post([this, token, keep, &a, &f, st = std::move(st), r = std::move(r),
                  done = std::move(done)]() mutable {
                auto it = places_.find(token);
                if (!st.ok() || it == places_.end()) {
                    a.status = std::move(st);
                    if (a.status.detail.find("lease not found") != std::string::npos)
                        attempt(token, keep, a, f);  // a new place, the blocking way
                    done();
                    return;
                }
                bool again = false;
                a.status = settle(it->second, *r, a, f, again);
                if (again) a.status = look(it->second, a, f);
                done();
            });
        });
}

bool EtcdClaim::wait_behind(const std::string& dir, std::int64_t rev, Status& st) {
    std::vector<mvccpb::KeyValue> ahead;
    std::int64_t seen = 0;
    if (st = store_.contenders(dir, rev - 1, false, 1, ahead, seen); !st.ok() || ahead.empty())
        return false;
    {
        std::lock_guard lk(m_);
        ahead_ = ahead.front().key();
        ahead_end_.clear();
        ahead_seen_ = seen;
    }
    return true;
}

Status EtcdClaim::nearest_writer(std::int64_t rev, std::string& writer, std::int64_t& seen) {
    std::vector<mvccpb::KeyValue> ahead;
    if (Status st = store_.contenders(dir_, rev - 1, false, 0, ahead, seen); !st.ok()) return st;
    writer.clear();
    for (const auto& kv : ahead)
        if (!is_reader(dir_, kv.key())) {
            writer = kv.key();
            break;
        }
    return {};
}

Status EtcdClaim::join(const std::string& token, Attempted& a, Fences& f, bool& joined) {
    EtcdChannel& ch = store_.channel();
    auto mine = places_.find(token);  // a place of ours in the queue goes when we join
    for (int round = 0; round < kLooks; ++round) {
        std::vector<mvccpb::KeyValue> first;
        std::int64_t seen = 0;
        if (Status st = store_.contenders(dir_, 0, true, 1, first, seen); !st.ok()) return st;
        if (first.empty()) return {};
        const auto& holder = first.front();
        auto holds = holds_of(holder.value(), spec_.owner);
        if (!holds || (mine != places_.end() && holder.key() == mine->second.key)) return {};
        etcdserverpb::TxnRequest txn;
        require(txn, holder.key(), etcdserverpb::Compare::MOD, holder.mod_revision());
        // This client does not hold it, yet its owner id does: a grant whose reply was lost.
        // That leftover goes, and this claim queues afresh for a hold of its own.
        bool leftover = spec_.leftover_is_new;
        if (leftover) {
            txn.add_success()->mutable_request_delete_range()->set_key(holder.key());
        } else {
            auto* put = txn.add_success()->mutable_request_put();
            put->set_key(holder.key());
            put->set_value(reentrant_value(*holds + 1, spec_.owner));
            put->set_ignore_lease(true);
            if (mine != places_.end())
                txn.add_success()->mutable_request_delete_range()->set_key(mine->second.key);
        }
        etcdserverpb::TxnResponse r;
        if (Status st = ch.txn(txn, r, store_.deadline(), fmt::format("acquiring '{}'", spec_.name),
                               Sent::write);
            !st.ok())
            return st;
        if (!r.succeeded()) continue;  // its holds moved: look again
        if (leftover) return {};
        Place p;
        if (Status st = store_.leases().adopt(holder.lease(), store_.deadline(), p.lease); !st.ok())
            return st;
        p.key = holder.key();
        p.rev = holder.create_revision();
        if (mine != places_.end() && mine->second.own) mine->second.lease->background = false;
        places_[token] = std::move(p);
        joined = a.acquired = true;
        a.kept_from = places_[token].lease->kept_from();
        f.fence = static_cast<std::uint64_t>(holder.create_revision());  // the holding's fence
        return {};
    }
    return {};  // holds keep moving under us: queue with a key of our own
}

std::shared_ptr<Holding> EtcdClaim::waiter(const std::string& token,
                                           std::chrono::milliseconds /*keep*/) const {
    auto h = std::make_shared<EtcdHolding>();
    auto it = places_.find(token);
    if (it == places_.end()) return h;  // never placed: nothing to drop
    h->key = it->second.key;
    h->more = it->second.more;
    h->lease = it->second.lease;
    h->rev = it->second.rev;
    h->own_lease = it->second.own;
    if (spec_.shape == Shape::reentrant) h->owner = spec_.owner;
    h->reservation = it->second.reservation;
    h->watches = store_.watches();
    return h;
}

std::shared_ptr<Holding> EtcdClaim::holding(const std::string& token,
                                            std::chrono::milliseconds keep,
                                            std::uint64_t /*fence*/) const {
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
