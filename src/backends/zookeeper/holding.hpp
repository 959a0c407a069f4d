// ZkHolding: one contender node of this client (a waiter's place or a holder's grant), what
// the store extends, releases and checks. Its node lives as long as the session that made it;
// a granted one is watched, so that its deletion is a loss told at once, not at the next
// renewal.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/zookeeper/session.hpp"
#include "core/store.hpp"

namespace deadbolt::detail {

/// The watch on a granted node of this client (ZkStore::watch_own). A sequential node's path
/// is never made again, so once its deletion is seen the holding is lost for good.
struct ZkOwnWatch {
    std::atomic<bool> gone{false};  // deleted (or missing when watched), or its session ended
    std::mutex m;
    std::weak_ptr<ZkSession> on;  // weak: a watch never keeps a session open
    std::uint64_t id = 0;         // the session's watch while set
    bool set = false;             // set and not fired: nothing to do at a renewal
    std::uint64_t arming = 0;     // counts settings: an id is kept only for the latest
};

struct ZkHolding final : Holding {
    std::shared_ptr<ZkSession> session;  // the session the node is on
    std::string dir;                     // the lock's znode
    std::string guid;                    // in the node's name: finds it after a lost reply
    std::string node;                    // its full path; empty when the create's reply was lost
    std::int64_t czxid = 0;              // the node's creation zxid (the fence); 0 = unknown
    std::string owner;  // a ReentrantMutex's: its node's data counts the owner's holds
    std::shared_ptr<ZkOwnWatch> watch;  // set once granted
    // A holding of several nodes is its parts alone: a MultiLock's, one per name; a
    // semaphore waiter's lease and its place at the gate.
    std::vector<std::shared_ptr<ZkHolding>> parts;
};

/// Where one token's attempts put a contender node of this client.
struct ZkPlace {
    std::shared_ptr<ZkSession> session;
    std::string guid;  // in the node's name
    std::string node;  // once created (or found again)
    std::int64_t czxid = 0;
    bool sent = false;  // a create went out; its node may exist though no reply said so
    std::shared_ptr<ZkOwnWatch> watch;  // set once granted, and handed to its holding
};

/// The holding of p's node under dir; one whose create never went out has nothing to drop.
inline std::shared_ptr<ZkHolding> holding_of(const ZkPlace& p, const std::string& dir) {
    auto h = std::make_shared<ZkHolding>();
    h->dir = dir;
    h->guid = p.guid;
    h->node = p.node;
    h->czxid = p.czxid;
    h->watch = p.watch;
    if (p.sent) h->session = p.session;
    return h;
}

inline const ZkHolding& as_zk(const Holding* h) {
    return *static_cast<const ZkHolding*>(h);
}

}  // namespace deadbolt::detail
