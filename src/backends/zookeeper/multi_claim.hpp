// ZkMultiClaim: a MultiLock on ZooKeeper. Every name is a Mutex of its own (Curator's layout,
// so each name is shared with Curator's and Kazoo's locks of it), taken one at a time in the
// names' sorted order: two MultiLocks of overlapping names never wait for each other in a
// circle. A refusal waits, as a Mutex does, on the first name not yet held; what is held
// stays held meanwhile (Curator's InterProcessMultiLock does the same).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "backends/zookeeper/claim.hpp"
#include "backends/zookeeper/store.hpp"

namespace deadbolt::detail {

class ZkMultiClaim final : public Claim {
  public:
    ZkMultiClaim(ZkStore& store, const LockSpec& spec, const std::stop_token& cancel);

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
    void wait(Clock::time_point until) override { parts_[waiting_on_]->wait(until); }

  private:
    // How far one token got: the first parts_ it holds, with their fences.
    struct Progress {
        std::shared_ptr<ZkSession> session;  // they were taken on
        std::size_t held = 0;
        std::vector<std::uint64_t> fences;  // by part
    };

    ZkStore& store_;
    const std::chrono::milliseconds ttl_;  // its nodes live on the session of this TTL
    ClaimTraits traits_;
    std::vector<std::unique_ptr<ZkClaim>> parts_;  // in the names' sorted order
    std::vector<std::size_t> name_of_part_;        // parts_[k] is spec.names[name_of_part_[k]]
    std::map<std::string, Progress> by_token_;
    std::size_t waiting_on_ = 0;
    std::optional<std::size_t> armed_;  // the part whose wake-up is armed
};

}  // namespace deadbolt::detail
