// LeaderElection on etcd, as etcd's concurrency.Election keeps it (so `etcdctl elect` and Go
// services campaign in the same election): a candidate is a contender key whose value is
// what it proclaims; the oldest leads, its create revision is the term.
#include <fmt/format.h>

#include "backends/etcd/dir_waker.hpp"
#include "backends/etcd/keys.hpp"
#include "backends/etcd/store.hpp"
#include "backends/etcd/txn.hpp"
#include "core/watch.hpp"

namespace deadbolt::detail {

void EtcdStore::add_term(const std::string& token, const std::shared_ptr<EtcdHolding>& h) {
    std::lock_guard lk(terms_m_);
    std::erase_if(terms_, [](const auto& t) { return t.second.expired(); });
    terms_[token] = h;
}

Status EtcdStore::proclaim(const std::string& name, const std::string& token,
                           std::string_view value, bool& ours) {
    std::shared_ptr<EtcdHolding> h;
    {
        std::lock_guard lk(terms_m_);
        if (auto it = terms_.find(token); it != terms_.end()) h = it->second.lock();
    }
    ours = false;
    if (!h || h->rev == 0) return {};
    // Only while our key is still the one we campaigned with (its create revision).
    etcdserverpb::TxnRequest txn;
    require(txn, h->key, etcdserverpb::Compare::CREATE, h->rev);
    auto* put = txn.add_success()->mutable_request_put();
    put->set_key(h->key);
    put->set_value(std::string(value));
    put->set_lease(h->lease->id);
    etcdserverpb::TxnResponse r;
    if (Status st =
            ch_->txn(txn, r, deadline(), fmt::format("proclaiming in '{}'", name), Sent::write);
        !st.ok())
        return st;
    ours = r.succeeded();
    return {};
}

namespace {

Status read_leader(EtcdStore& store, const std::string& dir, Leader& out, std::int64_t& seen) {
    std::vector<mvccpb::KeyValue> first;
    if (Status st = store.contenders(dir, 0, true, 1, first, seen); !st.ok()) return st;
    out = Leader{};
    if (first.empty()) return {};
    const auto& kv = first.front();
    out.elected = true;
    out.value = kv.value();
    out.term = static_cast<std::uint64_t>(kv.create_revision());
    out.ttl = store.lease_ttl(kv.lease());
    return {};
}

}  // namespace

Status EtcdStore::leader(const std::string& name, Leader& out) {
    std::int64_t seen = 0;
    return read_leader(*this, lock_dir(client_.options.key_prefix, name), out, seen);
}

Leader EtcdStore::observe(const std::string& name, const Leader& seen, const AcquireOptions& how) {
    auto dir = lock_dir(client_.options.key_prefix, name);
    DirWaker waker(watches_, dir, range_end(dir), how.cancel);
    Leader now;
    // A leader that dies without resigning has its key deleted at its lease's expiry: that
    // is a change under dir like any other, so the watch alone wakes the observer.
    auto look = [&](Look& found) {
        std::int64_t rev = 0;
        Status st = read_leader(*this, dir, now, rev);
        if (st.ok()) waker.looked(rev);
        found.done = st.ok() && !now.same_as(seen);
        return st;
    };
    watch(*this, waker, false, look, how, std::chrono::milliseconds(0));
    return now;
}

}  // namespace deadbolt::detail
