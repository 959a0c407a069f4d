// AsyncWaker: a waiter's wake-up on Redis for the event loop: the same pub/sub channels as
// RedisWaker, subscribed without blocking and looked at whenever the subscriber reports a
// change (RedisStore hands the news to every armed waker). Loop thread only.
#pragma once

#include <asio/steady_timer.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/lease_state.hpp"
#include "core/status.hpp"

namespace deadbolt::detail {

class RedisStore;

class AsyncWaker {
  public:
    using Channels = std::function<std::vector<std::string>()>;
    /// standby: how long its mailboxes stand by after a "next" (Subscriber).
    AsyncWaker(RedisStore& store, Channels channels, std::chrono::milliseconds standby = {});
    ~AsyncWaker();
    AsyncWaker(const AsyncWaker&) = delete;
    AsyncWaker& operator=(const AsyncWaker&) = delete;

    /// Subscribes to channels(); done(ok) once confirmed, or done(why) at until.
    void arm(Clock::time_point until, std::function<void(Status)> done);
    /// woken() at the next message on a channel (or a lost connection), once.
    void wait(std::function<void()> woken);
    void cancel_wait() noexcept { woken_ = nullptr; }
    /// Drops the subscription and any pending callback. Never throws.
    void disarm() noexcept;
    /// The subscriber reported a change: completes what it concerns.
    void look();

  private:
    void fail_arm(Status why);

    RedisStore& store_;
    Channels channels_;
    std::chrono::milliseconds standby_;
    std::vector<std::string> subscribed_to_;
    std::vector<std::uint64_t> seqs_;
    enum class State : unsigned char { idle, arming, armed } state_ = State::idle;
    std::function<void(Status)> armed_;
    std::function<void()> woken_;
    asio::steady_timer timer_;
    std::shared_ptr<char> alive_ = std::make_shared<char>();  // the timer's handler asks
};

}  // namespace deadbolt::detail
