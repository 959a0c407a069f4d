// EtcdHolding: one contender key of this client (a waiter's place or a holder's grant), what
// the store extends, releases and checks. A MultiLock's holds one key per name.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backends/etcd/leases.hpp"
#include "backends/etcd/watches.hpp"
#include "core/store.hpp"

namespace deadbolt::detail {

struct EtcdHolding final : Holding {
    std::string key;
    std::vector<std::string> more;  // a MultiLock's keys of its other names
    std::shared_ptr<EtcdLease> lease;
    std::int64_t rev = 0;    // the key's create revision (the fence); 0 = unknown (a lost reply)
    bool own_lease = false;  // the lease is this key's alone: release revokes it
    std::string owner;       // a ReentrantMutex's: release counts its holds down
    std::shared_ptr<void> reservation;           // keeps other claims of this client off key
    mutable std::atomic<bool> releasing{false};  // our own delete: its watch event is no loss
    std::shared_ptr<Watches> watches;
    // Its marks on the watches of its keys' deletion (once granted): (key, Watches::own's id).
    std::vector<std::pair<std::string, std::int64_t>> watching;

    EtcdHolding() = default;
    EtcdHolding(const EtcdHolding&) = delete;
    EtcdHolding& operator=(const EtcdHolding&) = delete;
    ~EtcdHolding() override {
        for (const auto& [key, id] : watching) watches->drop_own(key, id);
    }
};

/// Every key h holds: its own, then a MultiLock's others.
inline std::vector<const std::string*> held_keys(const EtcdHolding& h) {
    std::vector<const std::string*> keys{&h.key};
    for (const auto& k : h.more) keys.push_back(&k);
    return keys;
}

/// The etcd holding behind a holding the core hands back.
inline const EtcdHolding& as_etcd(const Holding* h) {
    return *static_cast<const EtcdHolding*>(h);
}

}  // namespace deadbolt::detail
