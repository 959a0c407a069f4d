// The compare every guarded etcd Txn of deadbolt's starts with: "key's target equals value".
#pragma once

#include <cstdint>
#include <string>

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

}  // namespace deadbolt::detail
