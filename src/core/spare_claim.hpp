// SpareClaim: the claim a lock object keeps between its acquisitions. Opening a claim works
// out what the lock's spec means to the engine (its keys, its line in the local queue) and
// allocates for it; a Mutex locked again and again repeated that every time. An engine whose
// claim can start over (Claim::recycle) leaves it here at the end of an acquisition, and the
// object's next acquisition reopens it. Threads that share one lock object share one spare:
// taken and put back atomically, so a thread that finds none opens a claim of its own.
#pragma once

#include <atomic>
#include <memory>
#include <stop_token>

namespace deadbolt::detail {

class Claim;
class Store;
struct LockSpec;

class SpareClaim {
  public:
    SpareClaim() = default;
    ~SpareClaim();
    SpareClaim(const SpareClaim&) = delete;
    SpareClaim& operator=(const SpareClaim&) = delete;

    /// The spare reopened for cancel, or else a new claim of store for spec. The spare is
    /// always one of the same store and spec: the caller keeps one SpareClaim per lock object.
    /// Throws as Store::open does.
    std::unique_ptr<Claim> take(Store& store, const LockSpec& spec, std::stop_token cancel);
    /// Ends c's acquisition: c becomes the spare when it recycles and there is none, else it
    /// is destroyed. Never throws.
    void keep(std::unique_ptr<Claim> c) noexcept;

  private:
    std::atomic<Claim*> spare_{nullptr};
};

}  // namespace deadbolt::detail
