// CountDownLatch on etcd: the key <prefix><name> holds the count, on a lease of the latch's
// TTL (so it opens by itself then); counting down is a compare-and-swap on the key's mod
// revision, and the last count deletes it. Waiters watch the key.
#include <fmt/format.h>

#include <charconv>

#include "backends/etcd/dir_waker.hpp"
#include "backends/etcd/store.hpp"
#include "backends/etcd/txn.hpp"
#include "core/watch.hpp"

namespace deadbolt::detail {
namespace {

// Tries of a count-down that other count-downs keep beating to the key.
constexpr int kCasTries = 64;

Status parse_count(const std::string& name, const std::string& v, std::int64_t& count) {
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), count);
    if (ec == std::errc() && end == v.data() + v.size() && count >= 0) return {};
    return Status::error(errc::wrong_type,
                         fmt::format("latch '{}' holds something that is not a count", name));
}

}  // namespace

Status EtcdStore::latch_set(const std::string& name, std::int64_t count,
                            std::chrono::milliseconds ttl, bool& set) {
    set = false;
    std::shared_ptr<EtcdLease> lease;
    if (Status st = leases_->own(ttl, deadline(), lease); !st.ok()) return st;
    const std::string key = client_.options.key_prefix + name;
    etcdserverpb::TxnRequest txn;
    require(txn, key, etcdserverpb::Compare::VERSION, 0);
    auto* put = txn.add_success()->mutable_request_put();
    put->set_key(key);
    put->set_value(std::to_string(count));
    put->set_lease(lease->id);
    etcdserverpb::TxnResponse r;
    Status st = ch_->txn(txn, r, deadline(), fmt::format("setting latch '{}'", name), Sent::write);
    set = st.ok() && r.succeeded();
    if (!set) leases_->revoke(*lease, deadline());  // set already: the lease is not needed
    return st;
}

Status EtcdStore::latch_count(const std::string& name, std::int64_t& count) {
    etcdserverpb::RangeRequest req;
    req.set_key(client_.options.key_prefix + name);
    etcdserverpb::RangeResponse r;
    count = 0;
    if (Status st = ch_->range(req, r, deadline(), fmt::format("reading latch '{}'", name));
        !st.ok() || r.kvs_size() == 0)
        return st;
    return parse_count(name, r.kvs(0).value(), count);
}

Status EtcdStore::latch_count_down(const std::string& name, bool& opened) {
    opened = false;
    const std::string key = client_.options.key_prefix + name;
    for (int i = 0; i < kCasTries; ++i) {
        etcdserverpb::RangeRequest get;
        get.set_key(key);
        etcdserverpb::RangeResponse now;
        if (Status st = ch_->range(get, now, deadline(), fmt::format("reading latch '{}'", name));
            !st.ok() || now.kvs_size() == 0)
            return st;  // open already (or never set)
        std::int64_t count = 0;
        if (Status st = parse_count(name, now.kvs(0).value(), count); !st.ok()) return st;
        etcdserverpb::TxnRequest txn;
        require(txn, key, etcdserverpb::Compare::MOD, now.kvs(0).mod_revision());
        if (count <= 1) {
            txn.add_success()->mutable_request_delete_range()->set_key(key);
        } else {
            auto* put = txn.add_success()->mutable_request_put();
            put->set_key(key);
            put->set_value(std::to_string(count - 1));
            put->set_ignore_lease(true);  // keeps the latch's lease, and so its TTL
        }
        etcdserverpb::TxnResponse r;
        if (Status st = ch_->txn(txn, r, deadline(), fmt::format("counting latch '{}' down", name),
                                 Sent::write);
            !st.ok())
            return st;
        if (r.succeeded()) {
            opened = count <= 1;
            return {};
        }
    }
    return Status::error(errc::busy, fmt::format("latch '{}' is counted down by too many at "
                                                 "once to win a turn; try again",
                                                 name));
}

bool EtcdStore::latch_wait(const std::string& name, const AcquireOptions& how) {
    const std::string key = client_.options.key_prefix + name;
    DirWaker waker(watches_, key, {}, how.cancel);
    auto look = [&](Look& found) {
        etcdserverpb::RangeRequest req;
        req.set_key(key);
        req.set_count_only(true);
        etcdserverpb::RangeResponse r;
        Status st = ch_->range(req, r, deadline(), fmt::format("reading latch '{}'", name));
        if (st.ok()) {
            waker.looked(r.header().revision());
            found.done = r.count() == 0;  // an expiry deletes it too: the watch sees that
        }
        return st;
    };
    return watch(*this, waker, false, look, how, std::chrono::milliseconds(0));
}

}  // namespace deadbolt::detail
