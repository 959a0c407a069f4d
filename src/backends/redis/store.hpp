// RedisStore: the seam's Redis side (DESIGN section 12). A claim runs a shape's acquire
// script on one server, a cluster's slot(s) or every Redlock node, and sleeps on pub/sub;
// holdings are renewed, released and checked as pipelines of the lease kind's scripts.
#pragma once

#include <memory>

#include "core/store.hpp"

namespace deadbolt::detail {

struct ClientImpl;

class RedisStore final : public Store {
  public:
    /// c owns the store and outlives it.
    explicit RedisStore(ClientImpl& c) : c_(c) {}

    Status supports(const LockSpec& spec) const override;
    std::unique_ptr<Claim> open(const LockSpec& spec, std::stop_token cancel) override;
    std::vector<Verdict> extend(std::span<const Renewal> rs, Clock::time_point by) override;
    std::vector<Verdict> release(std::span<const Holding* const> hs, Clock::time_point by) override;
    std::vector<Verdict> check(std::span<const Holding* const> hs, Clock::time_point by) override;
    Clock::time_point deadline() const override;
    Clock::time_point deadline_for(std::chrono::milliseconds ttl) const override;
    bool late_yes_is_lost() const override;

  private:
    ClientImpl& c_;
};

}  // namespace deadbolt::detail
