// RedisClaim: one acquisition on Redis: the shape's acquire script, run on one server, split
// over a cluster's slots (a MultiLock) or on every Redlock node, and pub/sub to wake on.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/redis/async_waker.hpp"
#include "backends/redis/replies.hpp"
#include "backends/redis/specs.hpp"
#include "backends/redis/waker.hpp"
#include "core/store.hpp"

namespace deadbolt::detail {

class RedisClaim final : public Claim {
  public:
    RedisClaim(ClientImpl& c, std::shared_ptr<const RedisSpec> spec, std::stop_token cancel);

    const ClaimTraits& traits() const override { return traits_; }
    void attempt(const std::string& token, std::chrono::milliseconds keep, Attempted& a,
                 Fences& f) override;
    Status confirm() override;
    std::shared_ptr<Holding> holding(const std::string& token, std::chrono::milliseconds keep,
                                     std::uint64_t fence) const override;
    std::shared_ptr<Holding> waiter(const std::string& token,
                                    std::chrono::milliseconds keep) const override;

    Status arm(Clock::time_point until) override;
    void disarm() noexcept override;
    void wait(Clock::time_point until) override { waker_.wait(until); }

    void async_attempt(const std::string& token, std::chrono::milliseconds keep, Attempted& a,
                       Fences& f, std::function<void()> done) override;
    void async_arm(Clock::time_point until, std::function<void(Status)> done) override;
    void async_wait(std::function<void()> woken) override;
    bool wakes_async() const override { return true; }
    void cancel_wait() noexcept override;

  private:
    ScriptCall call() const;
    void set_argv(const std::string& token, std::chrono::milliseconds keep);
    std::vector<std::string> channels() const;
    // What token is called in the name's line: role, then this client's inbox, then token.
    std::string member(const std::string& token) const;
    // An attempt's outcome: its ticket is this claim's place in the line from now on.
    void lined_up(const AttemptOutcome& out);
    // An attempt's outcome told to the machine (report), with its place in line.
    void reported(AttemptOutcome out, Attempted& a, Fences& f);

    ClientImpl& c_;
    std::shared_ptr<const RedisSpec> shared_;  // a Mutex's is shared with the next claims of
                                               // its name (SpecCache)
    const RedisSpec& spec_;
    ClaimTraits traits_;
    RedisWaker waker_;
    std::unique_ptr<AsyncWaker> async_waker_;  // made at the first async_arm
    std::vector<std::string> argv_;  // the last attempt's ARGV: token, px, fence_px, args...
    std::string line_id_;            // names its place in line: the claim's first token
    // Only a waiter that listens lines up: a release would otherwise tell nobody, and a
    // try-lock (which never arms) would leave a place behind.
    bool armed_ = false;
    std::string ticket_;    // its place in line, once it lined up; kept for every later attempt
    bool granted_ = false;  // confirm() passed: the next holding() is the grant's
};

}  // namespace deadbolt::detail
