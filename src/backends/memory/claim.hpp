// MemoryClaim: one acquisition in a memory space. An attempt decides under the space's mutex
// what the real engines decide in a script (who holds, who waits first, whose writer waits);
// a waiter sleeps until the space changes after its last look (a release, an expiry the clock
// moved past, a loss), with no polling; a holder's TTL running out is the FSM's timed look.
#pragma once

#include <cstdint>
#include <stop_token>
#include <string>
#include <vector>

#include "backends/memory/store.hpp"
#include "core/lock_spec.hpp"
#include "core/store.hpp"

namespace deadbolt::detail {

class MemoryClaim final : public Claim {
  public:
    MemoryClaim(MemoryStore& store, const LockSpec& spec, std::stop_token cancel);
    ~MemoryClaim() override { cancel_wait(); }
    MemoryClaim(const MemoryClaim&) = delete;
    MemoryClaim& operator=(const MemoryClaim&) = delete;

    const ClaimTraits& traits() const override { return traits_; }
    void attempt(const std::string& token, std::chrono::milliseconds keep, Attempted& a,
                 Fences& f) override;
    Status confirm() override { return {}; }
    std::shared_ptr<Holding> holding(const std::string& token, std::chrono::milliseconds keep,
                                     std::uint64_t fence) const override;
    std::shared_ptr<Holding> waiter(const std::string& token,
                                    std::chrono::milliseconds keep) const override;

    Status arm(Clock::time_point until) override;
    void disarm() noexcept override {}
    void wait(Clock::time_point until) override;
    void async_wait(std::function<void()> woken) override;
    bool wakes_async() const override { return true; }
    void cancel_wait() noexcept override;

  private:
    // The decision for token at t's moment: granted (fences filled) or refused (a.pttl).
    void decide(MemorySpace::Turn& t, const std::string& token, std::chrono::milliseconds keep,
                Attempted& a, Fences& f);

    MemoryStore& store_;
    const LockSpec spec_;
    std::stop_token cancel_;
    ClaimTraits traits_;
    std::vector<std::string> keys_;  // in the names' order
    std::uint64_t seen_ = 0;         // the space's generation the last look saw
    bool looked_ = false;
    std::uint64_t waker_ = 0;
};

}  // namespace deadbolt::detail
