// ZkClaim: one acquisition on ZooKeeper, as Curator's InterProcessMutex makes it. The first
// attempt creates our EPHEMERAL_SEQUENTIAL contender "_c_<guid>-lock-" under the lock's znode
// (and the znode, as a container, when missing); each attempt reads the children: the lowest
// sequence holds, and a refused one remembers the contender just ahead. The wake-up watches
// only that node (no herd, no polling); the next attempt reads the children again. An RWLock's
// reader waits only for the nearest writer ahead of it; its writer is a Mutex's contender. A
// ReentrantMutex's node counts its owner's holds in its data ("<holds> <owner>"): a claim of
// that owner, on any client, counts one more on the holder's node instead of queueing. A create
// whose reply was lost is found again by its guid, so it neither blocks the line nor is
// taken twice; a node of an older session is never taken as ours.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>

#include "backends/zookeeper/store.hpp"
#include "backends/zookeeper/wake.hpp"
#include "core/lock_spec.hpp"
#include "core/store.hpp"

namespace deadbolt::detail {

class ZkClaim final : public Claim {
  public:
    ZkClaim(ZkStore& store, const LockSpec& spec, std::stop_token cancel);
    ~ZkClaim() override;

    const ClaimTraits& traits() const override { return traits_; }
    void attempt(const std::string& token, std::chrono::milliseconds keep, Attempted& a,
                 Fences& f) override;
    Status confirm() override { return {}; }  // a write is committed by a quorum already
    std::shared_ptr<Holding> holding(const std::string& token, std::chrono::milliseconds keep,
                                     std::uint64_t fence) const override;
    std::shared_ptr<Holding> waiter(const std::string& token,
                                    std::chrono::milliseconds keep) const override;

    Status arm(Clock::time_point until) override;
    void disarm() noexcept override;
    void wait(Clock::time_point until) override;

  private:
    using Place = ZkPlace;

    // Our node for p in the lock's line (ZkStore::put_in_line), named and filled for spec_.
    Status place(Place& p, const std::string& token, Clock::time_point by,
                 std::optional<ZkReply>& listed);
    // A reentrant claim's owner holds the lock already (on any client): joined is set when
    // one more hold was counted on its node, which p now names.
    Status join(Place& p, Attempted& a, Fences& f, Clock::time_point by, bool& joined);
    // The line's verdict for p: granted, or refused behind ahead_.
    // listed: the line if read already; else it is read now.
    Status look(Place& p, Attempted& a, Fences& f, Clock::time_point by,
                std::optional<ZkReply>& listed);
    // One attempt, without following the wake-up.
    void try_once(const std::string& token, Attempted& a, Fences& f);
    // Watches ahead_ (the wake-up fires at once when there is none, or it is gone).
    Status watch_ahead(Clock::time_point by);

    ZkStore& store_;
    const LockSpec spec_;
    std::stop_token cancel_;
    ClaimTraits traits_;
    std::string dir_;
    std::map<std::string, Place> places_;  // by token

    std::shared_ptr<ZkWake> wake_ = std::make_shared<ZkWake>();  // the watch's callback holds it
    std::shared_ptr<ZkSession> ahead_session_;                   // the session of the last look
    std::string ahead_;    // the contender just ahead at the last look
    ZkWatchRef watch_;     // the watch on it
    std::string watched_;  // the node watched
    bool armed_ = false;   // armed by the core: the watch follows the contender ahead
};

}  // namespace deadbolt::detail
