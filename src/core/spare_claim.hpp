// SpareClaim: the claim a lock object keeps between its acquisitions. Opening a claim works
// out what the lock's spec means to the engine (its keys, its line in the local queue) and
// allocates for it; a Mutex locked again and again repeated that every time. An engine whose
// claim can start over (Claim::recycle) leaves it here at the end of an acquisition, and the
// object's next acquisition reopens it. Threads that share one lock object share one spare:
// taken and put back atomically, so a thread that finds none opens a claim of its own. It
// keeps the spec it is a spare for too, built once: the object's every acquisition asks for it.
#pragma once

#include <atomic>
#include <memory>
#include <stop_token>

#include "core/lock_spec.hpp"
#include "core/status.hpp"

namespace deadbolt::detail {

class Claim;
class Store;

class SpareClaim {
  public:
    explicit SpareClaim(LockSpec spec);
    ~SpareClaim();
    SpareClaim(const SpareClaim&) = delete;
    SpareClaim& operator=(const SpareClaim&) = delete;

    /// What the lock object asks for, every time.
    const LockSpec& spec() const noexcept { return spec_; }
    /// Whether spec()'s names and options are valid (validated()), worked out once as it is
    /// made: they never change, and checking them each time was a hundredth of a memcached
    /// cycle. What the store takes is asked each time (a ZooKeeper store learns its limits).
    const Status& valid() const noexcept { return valid_; }
    /// The spare reopened for cancel, or else a new claim of store for spec (spec(), or it cut
    /// to the store's longest TTL). The spare is always one of the same store: the caller keeps
    /// one SpareClaim per lock object. Throws as Store::open does.
    std::unique_ptr<Claim> take(Store& store, const LockSpec& spec, std::stop_token cancel);
    /// Ends c's acquisition: c becomes the spare when it recycles and there is none, else it
    /// is destroyed. Never throws.
    void keep(std::unique_ptr<Claim> c) noexcept;

  private:
    const LockSpec spec_;
    const Status valid_;
    std::atomic<Claim*> spare_{nullptr};
};

}  // namespace deadbolt::detail
