// Subscription: one waiter's interest in a few release channels, dropped when it goes away.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "backends/redis/net/status.hpp"
#include "backends/redis/net/subscriber.hpp"

namespace deadbolt::detail {

class Subscription {
  public:
    explicit Subscription(Subscriber& s) : s_(s) {}
    ~Subscription() { unsubscribe(); }
    Subscription(const Subscription&) = delete;
    Subscription& operator=(const Subscription&) = delete;

    /// Subscribes to every channel, confirmed by the server, or to none (the error says why:
    /// timeout / connect_failed). A stop request on cancel wakes wait().
    Status subscribe(std::vector<std::string> channels, Clock::time_point deadline,
                     const std::stop_token& cancel = {});
    /// Its mailboxes (Subscriber::mailbox) stand by this long after a "next" (0: they do not).
    void standby(std::chrono::milliseconds after);
    /// True between a successful subscribe() and unsubscribe().
    bool active() const noexcept { return !channels_.empty(); }
    /// Drops the interest (idempotent; never throws).
    void unsubscribe() noexcept;
    /// Sleeps until a message on any channel, a reconnect, a stop request, or deadline.
    void wait(Clock::time_point deadline);

  private:
    Subscriber& s_;
    std::vector<std::string> channels_;
    std::vector<std::uint64_t> seqs_;
    std::optional<std::stop_callback<std::function<void()>>> on_cancel_;
};

}  // namespace deadbolt::detail
