// EtcdClaim: one acquisition on etcd, as etcd's concurrency.Mutex makes it. An attempt puts
// our key <name>/<lease> if absent and reads the first contender in one Txn; refused, it
// finds the key just ahead of ours, and the wake-up watches only that key's deletion from the
// revision of that look on (no herd, no change missed, no polling). A holder's expiry deletes
// its key too, so the wake-up also covers it. An RWLock's reader holds when no writer is ahead
// of it and waits for the nearest one; its writer is a Mutex's contender. A ReentrantMutex's
// claim first counts one more hold on its owner's key when that key holds the lock. A
// MultiLock's claim puts one key per name in one Txn and holds when each is first in line.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <vector>

#include "backends/etcd/holding.hpp"
#include "backends/etcd/store.hpp"
#include "core/lock_spec.hpp"
#include "core/store.hpp"

namespace deadbolt::detail {

class EtcdClaim final : public Claim {
  public:
    EtcdClaim(EtcdStore& store, const LockSpec& spec, std::stop_token cancel);
    ~EtcdClaim() override;

    const ClaimTraits& traits() const override { return traits_; }
    void attempt(const std::string& token, std::chrono::milliseconds keep, Attempted& a,
                 Fences& f) override;
    Status confirm() override { return {}; }  // a Txn is committed by a quorum already
    std::shared_ptr<Holding> holding(const std::string& token, std::chrono::milliseconds keep,
                                     std::uint64_t fence) const override;
    std::shared_ptr<Holding> waiter(const std::string& token,
                                    std::chrono::milliseconds keep) const override;

    void async_attempt(const std::string& token, std::chrono::milliseconds keep, Attempted& a,
                       Fences& f, std::function<void()> done) override;

    Status arm(Clock::time_point until) override;
    void disarm() noexcept override;
    void wait(Clock::time_point until) override;
    void async_wait(std::function<void()> woken) override;
    bool wakes_async() const override { return true; }
    void cancel_wait() noexcept override;

  private:
    // Looks in one attempt: a contender ahead of ours can vanish between our reads; a few
    // tries settle it, else the wake-up's look sorts it out.
    static constexpr int kLooks = 3;

    // Where one token's attempts put their key.
    struct Place {
        std::shared_ptr<EtcdLease> lease;
        bool own = false;
        std::string key;
        std::vector<std::string> more;  // a MultiLock's keys of its other names, in order
        std::shared_ptr<void> reservation;
        std::int64_t rev = 0;  // our key's create revision, once an answer said it
    };

    // A reentrant claim's owner holds the lock already (on any client): joined is set when one
    // more hold was counted on its key, which token's place now names.
    Status join(const std::string& token, Attempted& a, Fences& f, bool& joined);

    std::string key_for(std::int64_t lease) const;  // our key on lease
    // token's place: made (a lease, a key) on its first attempt; nullptr and st when not.
    Place* place_for(const std::string& token, Status& st);
    Status look(Place& p, Attempted& a, Fences& f);
    std::size_t holders() const;  // how many of the first contenders hold
    // The Txn of one look: our key put if absent, and the first contenders read.
    etcdserverpb::TxnRequest look_txn(const Place& p) const;
    // What the look's answer r means for a (and f); again: look once more (the contender
    // ahead left between our reads).
    Status settle(Place& p, const etcdserverpb::TxnResponse& r, Attempted& a, Fences& f,
                  bool& again);
    void nothing_ahead(Attempted& a);
    // A MultiLock's look (multi.cpp): every name's key in one Txn, so that one revision orders
    // them in every name's queue and two MultiLocks never wait for each other in a cycle.
    Status look_all(Place& p, Attempted& a, Fences& f);
    // Watches the contender just ahead of rev under dir; false when none is left.
    bool wait_behind(const std::string& dir, std::int64_t rev, Status& st);
    // A reader's look: the key of the nearest writer created before rev ("" = none).
    Status nearest_writer(std::int64_t rev, std::string& writer, std::int64_t& seen);
    void watch_ahead();  // (re)watches ahead_, under nothing
    void woke();

    EtcdStore& store_;
    const LockSpec spec_;
    std::stop_token cancel_;
    ClaimTraits traits_;
    const std::string dir_;
    std::vector<std::string> dirs_;        // a MultiLock's, one per name (dir_ is the first)
    std::map<std::string, Place> places_;  // by token
    std::string current_;                  // the token of the last attempt

    std::mutex m_;
    std::condition_variable cv_;
    bool armed_ = false;
    bool woken_ = false;
    std::string ahead_;            // what to watch: the key just ahead of ours at the last look,
    std::string ahead_end_;        // or (a semaphore) every key from ahead_ up to this end
    std::int64_t ahead_seen_ = 0;  // the revision of that look
    std::string watching_;         // the key the watch is on; empty = none
    std::int64_t watch_id_ = 0;
    std::function<void()> async_woken_;
};

}  // namespace deadbolt::detail
