// Fenced data on etcd: the guarded value under its key, the highest fence accepted for it
// beside it (<key>:deadbolt-fence), and the value's version (etcd's own count of the key's
// puts). A write reads both at one revision, then commits in a Txn that compares both keys'
// mod revisions with what it read, so a stale holder's write, or one that raced another, is
// refused atomically; a raced one reads again. A holder's own write can also be guarded by
// the lock itself (why.md in etcd's docs): one Txn that puts only while the lock keys are
// still the holding's.
#include <fmt/format.h>

#include <charconv>

#include "backends/etcd/store.hpp"
#include "backends/etcd/txn.hpp"

namespace deadbolt::detail {
namespace {

constexpr int kRounds = 5;

std::string record_key(std::string_view data_key) {
    return std::string(data_key) + ":deadbolt-fence";
}

std::uint64_t parse_u64(const std::string& s) {
    std::uint64_t v = 0;
    std::from_chars(s.data(), s.data() + s.size(), v);
    return v;
}

}  // namespace

Status EtcdStore::fenced_get(std::string_view key, FencedValue& out) {
    etcdserverpb::RangeRequest req;
    req.set_key(std::string(key));
    etcdserverpb::RangeResponse r;
    if (Status st = ch_->range(req, r, deadline(), "reading fenced data"); !st.ok()) return st;
    out = {};
    if (r.kvs_size() == 1) {
        out.value = r.kvs(0).value();
        out.version = static_cast<std::uint64_t>(r.kvs(0).version());
    }
    return {};
}

Status EtcdStore::fenced_write(std::string_view key, std::string_view value, std::uint64_t fence,
                               std::string_view version, FencedResult& out) {
    const std::string data(key), record = record_key(key);
    for (int round = 0; round < kRounds; ++round) {
        etcdserverpb::TxnRequest look;
        look.add_success()->mutable_request_range()->set_key(data);
        look.add_success()->mutable_request_range()->set_key(record);
        etcdserverpb::TxnResponse now;
        if (Status st = ch_->txn(look, now, deadline(), "reading fenced data", Sent::read);
            !st.ok())
            return st;
        const auto& d = now.responses(0).response_range();
        const auto& f = now.responses(1).response_range();
        const mvccpb::KeyValue none;
        const auto& dkv = d.kvs_size() == 1 ? d.kvs(0) : none;
        const auto& fkv = f.kvs_size() == 1 ? f.kvs(0) : none;
        out = {};
        out.highest = parse_u64(fkv.value());
        out.version = static_cast<std::uint64_t>(dkv.version());
        if (fence < out.highest) {
            out.stale_fence = true;
            return {};
        }
        if (!version.empty() && std::to_string(out.version) != version) return {};
        etcdserverpb::TxnRequest write;
        require(write, data, etcdserverpb::Compare::MOD, dkv.mod_revision());
        require(write, record, etcdserverpb::Compare::MOD, fkv.mod_revision());
        // The data keeps its lease (its TTL, if someone gave it one); the record shares it.
        auto* put = write.add_success()->mutable_request_put();
        put->set_key(data);
        put->set_value(std::string(value));
        if (dkv.lease() != 0) put->set_ignore_lease(true);
        put = write.add_success()->mutable_request_put();
        put->set_key(record);
        put->set_value(std::to_string(fence));
        put->set_lease(dkv.lease());
        etcdserverpb::TxnResponse done;
        if (Status st = ch_->txn(write, done, deadline(), "a fenced write", Sent::write); !st.ok())
            return st;
        if (done.succeeded()) {
            out.accepted = true;
            out.highest = fence;
            ++out.version;
            return {};
        }
    }
    return Status::error(errc::timeout,
                         fmt::format("fenced data '{}' kept changing under {} tries; nothing "
                                     "was written: try again",
                                     key, kRounds));
}

Status EtcdStore::put_if_held(const Holding& held, std::string_view key, std::string_view value,
                              Clock::time_point by, bool& put) {
    put = false;
    const auto& h = as_etcd(&held);
    etcdserverpb::TxnRequest txn;
    for (const auto* lock_key : held_keys(h)) {
        // Under a lock's directory the data would queue as a contender (and hold the lock).
        auto dir = lock_key->substr(0, lock_key->rfind('/') + 1);
        if (key.starts_with(dir))
            return Status::error(errc::invalid_argument,
                                 fmt::format("put_if_current: key '{}' lies under the lock's "
                                             "directory '{}', where it would count as a "
                                             "contender; keep data keys outside it",
                                             key, dir));
        require_ours(txn, h, *lock_key);
    }
    auto* p = txn.add_success()->mutable_request_put();
    p->set_key(std::string(key));
    p->set_value(std::string(value));
    etcdserverpb::TxnResponse r;
    if (Status st = ch_->txn(txn, r, by, "a write guarded by the lock", Sent::write); !st.ok())
        return st;
    put = r.succeeded();
    return {};
}

}  // namespace deadbolt::detail
