// A MultiLock on etcd: one key per name, all put in one Txn on one lease. The Txn gives every
// key the same create revision, so the keys of two MultiLocks (and of Mutexes) stand in the
// same order in every name's queue: each waits only for older revisions, and no two wait
// for each other. It holds when its key is first under every name; else it waits for the
// key just ahead of it under the first name where it is not.
#include <fmt/format.h>

#include "backends/etcd/claim.hpp"
#include "backends/etcd/keys.hpp"
#include "backends/etcd/txn.hpp"

namespace deadbolt::detail {

Status EtcdClaim::look_all(Place& p, Attempted& a, Fences& f) {
    std::vector<std::string> keys{p.key};
    keys.insert(keys.end(), p.more.begin(), p.more.end());
    for (int round = 0; round < kLooks; ++round) {
        etcdserverpb::TxnRequest txn;
        for (const auto& key : keys) {
            require(txn, key, etcdserverpb::Compare::CREATE, 0);
            auto* put = txn.add_success()->mutable_request_put();
            put->set_key(key);
            put->set_value(current_);
            put->set_lease(p.lease->id);
            txn.add_failure()->mutable_request_range()->set_key(key);
        }
        for (const auto& dir : dirs_) {
            first_contenders(txn.add_success(), dir, 1);
            first_contenders(txn.add_failure(), dir, 1);
        }
        etcdserverpb::TxnResponse r;
        if (Status st = store_.channel().txn(txn, r, store_.deadline(),
                                             fmt::format("acquiring {}", spec_.name), Sent::write);
            !st.ok())
            return st;
        const auto n = static_cast<int>(keys.size());
        if (r.succeeded()) {
            p.rev = r.header().revision();
        } else {
            // Ours from an earlier attempt, all with one revision; a key deleted from outside
            // (or on another lease) costs every place: they go, and the next round starts over.
            bool whole = true;
            p.rev = 0;
            for (int i = 0; i < n; ++i) {
                const auto& got = r.responses(i).response_range();
                if (got.kvs_size() == 0 || got.kvs(0).lease() != p.lease->id ||
                    (p.rev != 0 && got.kvs(0).create_revision() != p.rev)) {
                    whole = false;
                    break;
                }
                p.rev = got.kvs(0).create_revision();
            }
            if (!whole) {
                etcdserverpb::TxnRequest drop;
                for (int i = 0; i < n; ++i) {
                    const auto& got = r.responses(i).response_range();
                    if (got.kvs_size() == 1 && got.kvs(0).lease() == p.lease->id)
                        drop.add_success()->mutable_request_delete_range()->set_key(keys[i]);
                }
                etcdserverpb::TxnResponse dropped;
                if (Status st = store_.channel().txn(drop, dropped, store_.deadline(),
                                                     "dropping a MultiLock's places", Sent::write);
                    !st.ok())
                    return st;
                p.rev = 0;
                continue;
            }
        }
        // The first name where another contender is ahead of ours, if any.
        std::size_t behind = dirs_.size();
        for (std::size_t i = 0; i < dirs_.size() && behind == dirs_.size(); ++i) {
            const auto& first = r.responses(n + static_cast<int>(i)).response_range();
            std::vector<mvccpb::KeyValue> head(first.kvs().begin(), first.kvs().end());
            if (head.empty() || !is_contender(dirs_[i], head.front().key())) {
                std::int64_t seen = 0;  // a longer name's key came first: read the contenders
                if (Status st = store_.contenders(dirs_[i], 0, true, 1, head, seen); !st.ok())
                    return st;
            }
            if (head.empty() || head.front().create_revision() != p.rev) behind = i;
        }
        if (behind == dirs_.size()) {
            a.acquired = true;
            a.kept_from = p.lease->kept_from();
            f.each.assign(dirs_.size(), static_cast<std::uint64_t>(p.rev));
            f.fence = f.each.front();
            if (p.own) p.lease->background = false;
            return {};
        }
        a.pttl = std::chrono::milliseconds(-1);  // an expiry is announced like a release
        Status st;
        if (wait_behind(dirs_[behind], p.rev, st)) {
            watch_ahead();
            return {};
        }
        if (!st.ok()) return st;
    }
    nothing_ahead(a);
    return {};
}

}  // namespace deadbolt::detail
