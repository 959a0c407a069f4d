// ZkPermitClaim: a Semaphore's permit, taken as Curator's InterProcessSemaphoreV2 takes a
// lease, so Java services share the semaphore. Under its znode, "locks" is a Mutex (the gate)
// and "leases" holds one EPHEMERAL_SEQUENTIAL "_c_<guid>-lease-" node per permit. The gate's
// holder makes its lease node and counts the leases: within the permits, the permit is ours
// and the gate goes; beyond, it keeps the gate and watches the leases' children until one
// goes. So only one waiter watches the leases (no herd); the others wait in the gate's line,
// each watching only the one ahead.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>

#include "backends/zookeeper/claim.hpp"
#include "backends/zookeeper/store.hpp"
#include "backends/zookeeper/wake.hpp"

namespace deadbolt::detail {

class ZkPermitClaim final : public Claim {
  public:
    ZkPermitClaim(ZkStore& store, const LockSpec& spec, std::stop_token cancel);
    ~ZkPermitClaim() override;

    const ClaimTraits& traits() const override { return traits_; }
    void attempt(const std::string& token, std::chrono::milliseconds keep, Attempted& a,
                 Fences& f) override;
    Status confirm() override { return {}; }
    std::shared_ptr<Holding> holding(const std::string& token, std::chrono::milliseconds keep,
                                     std::uint64_t fence) const override;
    std::shared_ptr<Holding> waiter(const std::string& token,
                                    std::chrono::milliseconds keep) const override {
        return holding(token, keep, 0);
    }

    Status arm(Clock::time_point until) override;
    void disarm() noexcept override;
    void wait(Clock::time_point until) override;

  private:
    // One token's lease node.
    struct Lease : ZkPlace {
        bool gate_gone = false;  // the gate was released once the permit was granted
    };

    // Counts the leases: granted within the permits, else refused (the leases watched).
    Status count(Lease& l, const std::string& token, Attempted& a, Fences& f, Clock::time_point by);
    // Points the armed wake-up at what the last refusal waits for: the gate's line (the gate
    // claim follows its own), or the leases' children, watched again once the watch fired.
    Status follow(Clock::time_point by);

    ZkStore& store_;
    const LockSpec spec_;
    std::stop_token cancel_;
    ClaimTraits traits_;
    std::string leases_;  // the leases' znode
    std::unique_ptr<ZkClaim> gate_;
    std::map<std::string, Lease> by_token_;

    bool at_gate_ = true;      // the last refusal was the gate's; else the leases' count
    bool armed_ = false;       // armed by the core
    bool gate_armed_ = false;  // the gate claim's wake-up is the armed one
    std::shared_ptr<ZkSession> counted_on_;  // the session of the last count
    std::shared_ptr<ZkWake> wake_ = std::make_shared<ZkWake>();
    ZkWatchRef watch_;  // on the leases' children
};

}  // namespace deadbolt::detail
