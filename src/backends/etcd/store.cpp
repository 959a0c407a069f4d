#include "backends/etcd/store.hpp"
#include "core/name_pattern.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "backends/etcd/claim.hpp"
#include "backends/etcd/keys.hpp"
#include "backends/etcd/txn.hpp"
#include "core/token.hpp"

namespace deadbolt::detail {
namespace {

// etcd's default --max-txn-ops: a Txn carries at most this many operations.
constexpr std::size_t kTxnOps = 128;
// A MultiLock's Txn puts and reads each name's key and reads its first contender.
constexpr std::size_t kMultiNames = kTxnOps / 2;

// Whether kv is h's key as h placed it.
bool is_ours(const EtcdHolding& h, const mvccpb::KeyValue& kv) {
    return h.rev > 0 ? kv.create_revision() == h.rev : kv.lease() == h.lease->id;
}

// What etcd does not offer, and why (the only primitive so far: RateLimiter).
constexpr std::string_view kNoBucket =
    "is not offered on etcd: etcd has no server clock and no scripts, so a token bucket would "
    "be refilled by each client's clock and every take would be a read and a compare-and-swap "
    "that contending clients retry; keep rate limits on Redis (redis://)";

}  // namespace

EtcdStore::EtcdStore(ClientImpl& c, std::shared_ptr<EtcdChannel> ch)
    : client_(c), ch_(std::move(ch)), watches_(std::make_shared<Watches>(ch_)) {
    leases_ = std::make_unique<Leases>(ch_, [this] {
        if (on_doubt) on_doubt();  // a lease went with its keys: check every holding
    });
}

EtcdStore::~EtcdStore() {
    leases_.reset();  // revokes the shared leases before the streams go
    watches_.reset();
}

void EtcdStore::stop() noexcept {}

Status EtcdStore::supports(const LockSpec& spec) const {
    // etcd's queue is first come, first served (by create revision): a FairMutex is a Mutex.
    // A campaign is one too, with the candidate's value in its key (concurrency.Election).
    // A semaphore's first `permits` contenders hold.
    // An RWLock's writer is a Mutex's contender; its readers hold while no writer is ahead.
    // A reentrant lock's holds are counted on its owner's key.
    if (spec.shape == Shape::multi && spec.names.size() > kMultiNames)
        return Status::error(errc::invalid_argument,
                             fmt::format("a MultiLock on etcd takes at most {} names, not {}: "
                                         "its keys go in one Txn of at most {} operations",
                                         kMultiNames, spec.names.size(), kTxnOps));
    if (spec.options.lock_delay.count() > 0)
        return Status::error(errc::invalid_argument,
                             "lock_delay cannot be kept on etcd: a lease's keys go the moment it "
                             "expires, so nothing holds the name after; set lock_delay = 0");
    return {};
}

Status EtcdStore::refusal(std::string_view what) const {
    if (what != RateLimits::kWhat) return Store::refusal(what);
    return Status::error(errc::invalid_argument, fmt::format("{} {}", what, kNoBucket));
}

std::unique_ptr<Claim> EtcdStore::open(const LockSpec& spec, std::stop_token cancel) {
    return std::make_unique<EtcdClaim>(*this, spec, std::move(cancel));
}

std::shared_ptr<void> EtcdStore::reserve(const std::vector<std::string>& keys) {
    // Not empty while held (a shared_ptr to nothing would read as "refused").
    struct Reservation {
        std::shared_ptr<Reserved> r;
        std::vector<std::string> keys;
        Reservation(std::shared_ptr<Reserved> of, std::vector<std::string> k)
            : r(std::move(of)), keys(std::move(k)) {}
        Reservation(const Reservation&) = delete;
        Reservation& operator=(const Reservation&) = delete;
        ~Reservation() {
            std::lock_guard g(r->m);
            for (const auto& key : keys) r->keys.erase(key);
        }
    };
    std::lock_guard lk(reserved_->m);
    for (const auto& key : keys)
        if (reserved_->keys.contains(key)) return {};
    reserved_->keys.insert(keys.begin(), keys.end());
    return std::make_shared<Reservation>(reserved_, keys);
}

void EtcdStore::watch_own(EtcdHolding& h) {
    const EtcdHolding* self = &h;
    auto doubt = [this, self] {
        if (!self->releasing && on_doubt) on_doubt();
    };
    for (const auto* key : held_keys(h))
        h.watching.emplace_back(*key, watches_->own(*key, h.rev, doubt));
}

Status EtcdStore::contenders(const std::string& dir, std::int64_t max_rev, bool oldest_first,
                             std::size_t limit, std::vector<mvccpb::KeyValue>& out,
                             std::int64_t& seen) {
    out.clear();
    etcdserverpb::RangeRequest req;
    req.set_key(dir);
    req.set_range_end(range_end(dir));
    req.set_sort_target(etcdserverpb::RangeRequest::CREATE);
    req.set_sort_order(oldest_first ? etcdserverpb::RangeRequest::ASCEND
                                    : etcdserverpb::RangeRequest::DESCEND);
    if (max_rev > 0) req.set_max_create_revision(max_rev);
    req.set_limit(static_cast<std::int64_t>(limit));
    for (int round = 0; round < 2; ++round) {
        etcdserverpb::RangeResponse r;
        if (Status st = ch_->range(req, r, deadline(), "reading a lock's contenders"); !st.ok())
            return st;
        seen = r.header().revision();
        out.clear();
        for (const auto& kv : r.kvs())
            if (is_contender(dir, kv.key()) && (limit == 0 || out.size() < limit))
                out.push_back(kv);
        if (limit == 0 || out.size() == limit || (!r.more() && r.kvs_size() < req.limit()))
            return {};
        // Keys of longer names ("dir/x/...") took places: read them all.
        req.set_limit(0);
    }
    return {};
}

std::vector<Verdict> EtcdStore::check(std::span<const Holding* const> hs, Clock::time_point by) {
    std::vector<Verdict> out;
    out.reserve(hs.size());
    for (std::size_t begin = 0; begin < hs.size();) {
        // As many holdings as fit in one Txn, each with a read of every key it holds.
        etcdserverpb::TxnRequest txn;
        auto end = begin;
        for (; end < hs.size(); ++end) {
            const auto& h = as_etcd(hs[end]);
            if (end > begin && txn.success_size() + 1 + h.more.size() > kTxnOps) break;
            txn.add_success()->mutable_request_range()->set_key(h.key);
            for (const auto& key : h.more) txn.add_success()->mutable_request_range()->set_key(key);
        }
        etcdserverpb::TxnResponse r;
        Status st = ch_->txn(txn, r, by, "checking holdings", Sent::read);
        int at = 0;
        for (auto i = begin; i < end; ++i) {
            const auto& h = as_etcd(hs[i]);
            if (!st.ok()) {
                out.push_back(Verdict::unknown(st));
                continue;
            }
            bool ours = !h.key.empty();
            for (std::size_t k = 0; k <= h.more.size(); ++k) {
                const auto& got = r.responses(at++).response_range();
                ours = ours && got.kvs_size() == 1 && is_ours(h, got.kvs(0));
            }
            out.push_back(ours ? Verdict::yes() : Verdict::no());
        }
        begin = end;
    }
    return out;
}

std::vector<Verdict> EtcdStore::extend(std::span<const Renewal> rs, Clock::time_point by) {
    std::vector<Verdict> out(rs.size(), Verdict::no());
    std::vector<EtcdLease*> leases;
    std::vector<std::size_t> lease_of(rs.size());
    for (std::size_t i = 0; i < rs.size(); ++i) {
        const auto& h = as_etcd(rs[i].holding);
        if (h.key.empty()) continue;
        if (rs[i].keep > h.lease->ttl) {
            out[i] = Verdict::unknown(Status::error(
                errc::invalid_argument,
                fmt::format("an etcd lease keeps the TTL it was granted ({} s): extend by at "
                            "most that, or acquire with a longer ttl",
                            h.lease->ttl.count())));
            continue;
        }
        auto at = std::find(leases.begin(), leases.end(), h.lease.get());
        lease_of[i] = static_cast<std::size_t>(at - leases.begin());
        if (at == leases.end()) leases.push_back(h.lease.get());
    }
    auto kept = leases_->keep(leases, by);
    std::vector<const Holding*> alive;
    std::vector<std::size_t> alive_at;
    for (std::size_t i = 0; i < rs.size(); ++i) {
        const auto& h = as_etcd(rs[i].holding);
        if (h.key.empty() || out[i].is == Verdict::Is::unknown) continue;
        const Verdict& k = kept[lease_of[i]];
        if (k.is == Verdict::Is::yes) {
            alive.push_back(rs[i].holding);
            alive_at.push_back(i);
        } else {
            out[i] = k;
        }
    }
    // A live lease keeps only keys that are still there: one deleted from outside is lost.
    auto checked = check(alive, by);
    for (std::size_t j = 0; j < alive.size(); ++j) out[alive_at[j]] = checked[j];
    return out;
}

std::vector<Verdict> EtcdStore::release(std::span<const Holding* const> hs, Clock::time_point by) {
    std::vector<Verdict> out;
    out.reserve(hs.size());
    for (const Holding* one : hs) {
        const auto& h = as_etcd(one);
        h.releasing = true;
        if (h.key.empty()) {
            out.push_back(Verdict::no());
            continue;
        }
        if (!h.owner.empty()) {  // one hold of a reentrant key's owner: others may remain
            out.push_back(release_hold(h, by));
            continue;
        }
        if (h.own_lease) {  // the key goes with its lease
            out.push_back(leases_->revoke(*h.lease, by));
            continue;
        }
        etcdserverpb::TxnResponse r;
        Status st = ch_->txn(drop_txn(h), r, by, "releasing a lock", Sent::write);
        out.push_back(st.ok() ? dropped(r) : Verdict::unknown(std::move(st)));
    }
    return out;
}

void EtcdStore::async_release(std::shared_ptr<const Holding> h, Clock::time_point by,
                              std::function<void(Verdict)> done) {
    const auto& e = as_etcd(h.get());
    if (e.key.empty() || !e.owner.empty() || e.own_lease) {  // see release()
        Store::async_release(std::move(h), by, std::move(done));
        return;
    }
    e.releasing = true;
    // The reply may come after the client died (its loop with it): post through a handle
    // that outlives the loop.
    auto post = client_.loop().poster();
    ch_->async_txn(drop_txn(e), by, "releasing a lock", Sent::write,
                   [post, h = std::move(h), done = std::move(done)](
                       Status st, std::shared_ptr<etcdserverpb::TxnResponse> r) mutable {
                       post([h = std::move(h), st = std::move(st), r = std::move(r),
                             done = std::move(done)]() mutable {
                           done(st.ok() ? dropped(*r) : Verdict::unknown(std::move(st)));
                       });
                   });
}

etcdserverpb::TxnRequest EtcdStore::drop_txn(const EtcdHolding& h) {
    // Each key goes if it is still ours (a nested Txn each: one deleted from outside does
    // not keep the others).
    etcdserverpb::TxnRequest txn;
    auto drop = [&](const std::string& key) {
        auto* one = txn.add_success()->mutable_request_txn();
        require_ours(*one, h, key);
        one->add_success()->mutable_request_delete_range()->set_key(key);
    };
    drop(h.key);
    for (const auto& key : h.more) drop(key);
    return txn;
}

Verdict EtcdStore::dropped(const etcdserverpb::TxnResponse& r) {
    // It was ours only if every key was.
    bool all = std::all_of(r.responses().begin(), r.responses().end(),
                           [](const auto& one) { return one.response_txn().succeeded(); });
    return all ? Verdict::yes() : Verdict::no();
}

Verdict EtcdStore::release_hold(const EtcdHolding& h, Clock::time_point by) {
    for (int round = 0; round < 3; ++round) {
        etcdserverpb::RangeRequest get;
        get.set_key(h.key);
        etcdserverpb::RangeResponse now;
        if (Status st = ch_->range(get, now, by, "releasing a lock"); !st.ok())
            return Verdict::unknown(std::move(st));
        if (now.kvs_size() == 0 || !is_ours(h, now.kvs(0))) return Verdict::no();
        auto holds = holds_of(now.kvs(0).value(), h.owner).value_or(1);
        etcdserverpb::TxnRequest txn;
        require(txn, h.key, etcdserverpb::Compare::MOD, now.kvs(0).mod_revision());
        if (holds > 1) {
            auto* put = txn.add_success()->mutable_request_put();
            put->set_key(h.key);
            put->set_value(reentrant_value(holds - 1, h.owner));
            put->set_ignore_lease(true);
        } else {
            txn.add_success()->mutable_request_delete_range()->set_key(h.key);
        }
        etcdserverpb::TxnResponse r;
        if (Status st = ch_->txn(txn, r, by, "releasing a lock", Sent::write); !st.ok())
            return Verdict::unknown(std::move(st));
        if (r.succeeded()) return Verdict::yes();
    }
    return Verdict::unknown(Status::error(
        errc::unknown_outcome,
        fmt::format("etcd key '{}' kept changing while its hold was released", h.key)));
}

Status EtcdStore::statuses(const std::vector<std::string>& names,
                           std::vector<std::pair<LockStatus, Status>>& out) {
    out.clear();
    for (const auto& name : names) {
        auto dir = lock_dir(client_.options.key_prefix, name);
        etcdserverpb::RangeRequest req;
        req.set_key(dir);
        req.set_range_end(range_end(dir));
        req.set_sort_target(etcdserverpb::RangeRequest::CREATE);
        req.set_sort_order(etcdserverpb::RangeRequest::ASCEND);
        etcdserverpb::RangeResponse r;
        Status st = ch_->range(req, r, deadline(), "reading a lock's state");
        if (!st.ok()) return st;
        LockStatus s;
        s.kind = "free";
        std::vector<const mvccpb::KeyValue*> queue;
        for (const auto& kv : r.kvs())
            if (is_contender(dir, kv.key())) queue.push_back(&kv);
        // Readers at the head of the queue hold together; anyone else holds alone.
        std::size_t readers = 0;
        while (readers < queue.size() && is_reader(dir, queue[readers]->key())) ++readers;
        if (!queue.empty()) {
            const auto& holder = *queue.front();
            s.held = true;
            s.kind = readers > 0                       ? "readers"
                     : parse_reentrant(holder.value()) ? "reentrant"
                                                       : "mutex";
            s.holders = static_cast<int>(std::max<std::size_t>(readers, 1));
            s.waiters = static_cast<int>(queue.size()) - s.holders;
            s.writer_waiting = readers > 0 && readers < queue.size();
            if (readers == 0) s.last_fence = static_cast<std::uint64_t>(holder.create_revision());
            for (int i = 0; i < std::min(s.holders, kMaxListedHolders); ++i) {
                const auto& one = *queue[static_cast<std::size_t>(i)];
                Holder who{.ttl = lease_ttl(one.lease())};
                if (auto o = token_origin(one.value()))
                    who.host = o->host, who.pid = o->pid;
                else  // their key's value is empty: etcd's own lock and election clients
                    who.client = "etcdctl lock or elect, or Go's concurrency.Mutex";
                // Free once the last one goes; never, while one has no lease.
                if (s.ttl.count() >= 0 && (who.ttl.count() < 0 || who.ttl > s.ttl)) s.ttl = who.ttl;
                s.held_by.push_back(std::move(who));
            }
        }
        out.emplace_back(std::move(s), Status{});
    }
    return {};
}

Status EtcdStore::lock_names(std::string_view pattern, std::vector<std::string>& names) {
    const std::string& prefix = client_.options.key_prefix;
    etcdserverpb::RangeRequest req;
    req.set_key(prefix.empty() ? std::string(1, '\0') : prefix);
    req.set_range_end(prefix.empty() ? std::string(1, '\0') : range_end(prefix));
    req.set_keys_only(true);
    etcdserverpb::RangeResponse r;
    if (Status st = ch_->range(req, r, deadline(), "listing locks"); !st.ok()) return st;
    std::set<std::string> found;
    for (const auto& kv : r.kvs()) {
        // <prefix><name>/[read-]<lease id in hex>: anything else under the prefix is no lock.
        std::string_view key(kv.key());
        auto slash = key.rfind('/');
        if (slash == std::string_view::npos || slash < prefix.size()) continue;
        auto id = key.substr(slash + 1);
        if (id.starts_with("read-")) id.remove_prefix(5);
        if (id.empty() || id.find_first_not_of("0123456789abcdef") != std::string_view::npos)
            continue;
        std::string name(key.substr(prefix.size(), slash - prefix.size()));
        if (name_matches(pattern, name)) found.insert(std::move(name));
    }
    names.assign(found.begin(), found.end());
    return {};
}

std::chrono::milliseconds EtcdStore::lease_ttl(std::int64_t id) {
    if (id == 0) return std::chrono::milliseconds(-1);
    etcdserverpb::LeaseTimeToLiveRequest req;
    req.set_id(id);
    etcdserverpb::LeaseTimeToLiveResponse r;
    if (!ch_->call(
                [&](grpc::ClientContext& c) { return ch_->lease().LeaseTimeToLive(&c, req, &r); },
                deadline(), "reading a holder's lease", Sent::read)
             .ok())
        return std::chrono::milliseconds(0);
    return std::chrono::seconds(std::max<std::int64_t>(r.ttl(), 0));
}

Status EtcdStore::force_unlock(const std::string& name, std::string& kind) {
    auto dir = lock_dir(client_.options.key_prefix, name);
    etcdserverpb::RangeRequest req;
    req.set_key(dir);
    req.set_range_end(range_end(dir));
    req.set_keys_only(true);
    etcdserverpb::RangeResponse r;
    if (Status st = ch_->range(req, r, deadline(), "reading a lock's contenders"); !st.ok())
        return st;
    etcdserverpb::TxnRequest txn;
    for (const auto& kv : r.kvs())
        if (is_contender(dir, kv.key()))
            txn.add_success()->mutable_request_delete_range()->set_key(kv.key());
    kind = txn.success_size() > 0 ? "mutex" : "free";
    if (txn.success_size() == 0) return {};
    etcdserverpb::TxnResponse t;
    return ch_->txn(txn, t, deadline(), "force-unlocking", Sent::write);
}

Status EtcdStore::ping() {
    etcdserverpb::RangeRequest req;
    req.set_key(std::string(1, '\0'));
    req.set_limit(1);
    req.set_keys_only(true);
    etcdserverpb::RangeResponse r;
    return ch_->range(req, r, deadline(), "a ping");
}

namespace {

// The contender holding permit id (its value is the token the permit was granted to).
Status find_permit(EtcdStore& store, const std::string& dir, std::string_view id,
                   mvccpb::KeyValue& out) {
    std::vector<mvccpb::KeyValue> all;
    std::int64_t seen = 0;
    if (Status st = store.contenders(dir, 0, true, 0, all, seen); !st.ok()) return st;
    out.Clear();
    for (auto& kv : all)
        if (kv.value() == id) out = std::move(kv);
    return {};
}

}  // namespace

Status EtcdStore::permit_release(const std::string& name, std::string_view id, bool& released) {
    released = false;
    mvccpb::KeyValue kv;
    if (Status st = find_permit(*this, lock_dir(client_.options.key_prefix, name), id, kv);
        !st.ok() || kv.key().empty())
        return st;
    etcdserverpb::TxnRequest txn;
    require(txn, kv.key(), etcdserverpb::Compare::CREATE, kv.create_revision());
    txn.add_success()->mutable_request_delete_range()->set_key(kv.key());
    etcdserverpb::TxnResponse r;
    Status st = ch_->txn(txn, r, deadline(), "releasing a permit", Sent::write);
    released = st.ok() && r.succeeded();
    return st;
}

Status EtcdStore::permit_extend(const std::string& name, std::string_view id,
                                std::chrono::milliseconds keep, bool& extended) {
    extended = false;
    mvccpb::KeyValue kv;
    if (Status st = find_permit(*this, lock_dir(client_.options.key_prefix, name), id, kv);
        !st.ok() || kv.key().empty())
        return st;
    // A keepalive renews the permit's lease to the TTL it was granted, which cannot change.
    etcdserverpb::LeaseTimeToLiveRequest req;
    req.set_id(kv.lease());
    etcdserverpb::LeaseTimeToLiveResponse t;
    if (Status st = ch_->call(
            [&](grpc::ClientContext& c) { return ch_->lease().LeaseTimeToLive(&c, req, &t); },
            deadline(), "reading a permit's lease", Sent::read);
        !st.ok())
        return st;
    if (t.ttl() <= 0) return {};
    if (keep > std::chrono::seconds(t.grantedttl()))
        return Status::error(errc::invalid_argument,
                             fmt::format("an etcd lease keeps the TTL it was granted ({} s): "
                                         "extend a permit by at most that",
                                         t.grantedttl()));
    auto lease = std::make_shared<EtcdLease>();
    lease->id = kv.lease();
    lease->ttl = std::chrono::seconds(t.grantedttl());
    EtcdLease* one = lease.get();
    auto v = leases_->keep({&one, 1}, deadline(), lease).front();
    if (v.is == Verdict::Is::unknown) return v.status;
    extended = v.is == Verdict::Is::yes;
    return {};
}

Status EtcdStore::permits_in_use(const std::string& name, int permits, int& in_use) {
    std::vector<mvccpb::KeyValue> held;
    std::int64_t seen = 0;
    Status st = contenders(lock_dir(client_.options.key_prefix, name), 0, true,
                           static_cast<std::size_t>(std::max(permits, 1)), held, seen);
    in_use = static_cast<int>(held.size());
    return st;
}

}  // namespace deadbolt::detail
