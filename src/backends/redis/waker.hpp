// RedisWaker: a waiter's wake-up on Redis, pub/sub: a lock's waiter listens on the client's
// inbox and its mailboxes (lua/line.cpp), a latch's or an election's observer on their
// channels. The subscription is made at the first arm.
#pragma once

#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "backends/redis/net/subscription.hpp"
#include "backends/redis/store.hpp"
#include "core/client_impl.hpp"
#include "core/store.hpp"
#include "core/watch.hpp"

namespace deadbolt::detail {

class RedisWaker : public Waker {
  public:
    using Channels = std::function<std::vector<std::string>()>;
    /// standby: how long its mailboxes stand by after a "next" (Subscriber).
    RedisWaker(ClientImpl& c, Channels channels, std::stop_token cancel,
               std::chrono::milliseconds standby = {})
        : c_(c), channels_(std::move(channels)), cancel_(std::move(cancel)), standby_(standby) {}

    Status arm(Clock::time_point until) override {
        if (!sub_) sub_.emplace(redis(c_).subscriber());
        Status st = sub_->subscribe(channels_(), until, cancel_);
        if (st.ok() && standby_.count() > 0) sub_->standby(standby_);
        return st;
    }
    void disarm() noexcept override {
        if (sub_) sub_->unsubscribe();
    }
    void wait(Clock::time_point until) override {
        if (sub_) sub_->wait(until);
    }

  private:
    ClientImpl& c_;
    Channels channels_;
    std::stop_token cancel_;
    std::chrono::milliseconds standby_;
    std::optional<Subscription> sub_;
};

/// watch() on Redis: wakes on messages on channels.
inline bool watch_channels(ClientImpl& c, std::vector<std::string> channels,
                           const std::function<Status(Look&)>& look, const AcquireOptions& how,
                           std::chrono::milliseconds unarmed_recheck) {
    RedisWaker waker(
        c, [ch = std::move(channels)] { return ch; }, how.cancel);
    return watch(*c.store, waker, redis(c).nodes->redlock() || redis(c).cluster != nullptr, look,
                 how, unarmed_recheck);
}

}  // namespace deadbolt::detail
