// Pieces of the etcd Txns deadbolt's claims and store build: the compare that guards them
// ("key's target equals value") and the read of a lock's first contenders.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "backends/etcd/holding.hpp"
#include "backends/etcd/keys.hpp"
#include "etcd/etcdserver/etcdserverpb/rpc.pb.h"

namespace deadbolt::detail {

/// Makes txn apply only while key's target (CREATE, MOD or LEASE) equals value.
inline void require(etcdserverpb::TxnRequest& txn, const std::string& key,
                    etcdserverpb::Compare::CompareTarget target, std::int64_t value) {
    auto* cmp = txn.add_compare();
    cmp->set_result(etcdserverpb::Compare::EQUAL);
    cmp->set_target(target);
    cmp->set_key(key);
    if (target == etcdserverpb::Compare::CREATE)
        cmp->set_create_revision(value);
    else if (target == etcdserverpb::Compare::MOD)
        cmp->set_mod_revision(value);
    else
        cmp->set_lease(value);
}

/// Makes txn apply only while key is h's, as h placed it (its create revision, the fence;
/// or, after a lost reply, its lease).
inline void require_ours(etcdserverpb::TxnRequest& txn, const EtcdHolding& h,
                         const std::string& key) {
    if (h.rev > 0)
        require(txn, key, etcdserverpb::Compare::CREATE, h.rev);
    else
        require(txn, key, etcdserverpb::Compare::LEASE, h.lease->id);
}

/// Makes op read the first n keys under dir in create order (the lock's first contenders).
inline void first_contenders(etcdserverpb::RequestOp* op, const std::string& dir, std::size_t n) {
    auto* r = op->mutable_request_range();
    r->set_key(dir);
    r->set_range_end(range_end(dir));
    r->set_sort_target(etcdserverpb::RangeRequest::CREATE);
    r->set_sort_order(etcdserverpb::RangeRequest::ASCEND);
    r->set_limit(static_cast<std::int64_t>(n));
}

}  // namespace deadbolt::detail
