// RedisWaker: a waiter's wake-up on Redis, pub/sub on the lock's release channels. The
// subscription is made at the first arm, so a lock taken at once never starts the
// subscriber's thread or connection.
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
    RedisWaker(ClientImpl& c, Channels channels, std::stop_token cancel)
        : c_(c), channels_(std::move(channels)), cancel_(std::move(cancel)) {}

    Status arm(Clock::time_point until) override {
        if (!sub_) sub_.emplace(redis(c_).subscriber());
        return sub_->subscribe(channels_(), until, cancel_);
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
