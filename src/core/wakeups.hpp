// Wakeups: how a blocking driver of the acquire machine sleeps. The subscription is made at
// the first real wait, so a lock taken at once never starts the subscriber's thread or
// connection.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/acquire_fsm.hpp"
#include "core/client_impl.hpp"
#include "core/threads.hpp"
#include "deadbolt/acquire_options.hpp"
#include "net/subscription.hpp"

namespace deadbolt::detail {

class Wakeups {
  public:
    Wakeups(ClientImpl& c, const AcquireOptions& how) : c_(c), how_(how) {}

    /// Subscribes to channels, by the command timeout or the caller's deadline if sooner.
    Status subscribe(const std::vector<std::string>& channels) {
        if (!sub_) sub_.emplace(c_.subscriber());
        auto until = Clock::now() + c_.ep.options.command_timeout;
        if (how_.deadline) until = std::min(until, *how_.deadline);
        return sub_->subscribe(channels, until, how_.cancel);
    }
    void unsubscribe() noexcept {
        if (sub_) sub_->unsubscribe();
    }
    /// Until a message, a reconnect, a stop request or until.
    void wait(Clock::time_point until) {
        if (sub_) sub_->wait(until);
    }
    /// Until until or a stop request.
    void sleep(Clock::time_point until) const { sleep_until(until, how_.cancel); }

    /// Does step's subscribe (to channels()), wait or sleep and tells fsm; false for any other
    /// step, which is the driver's own.
    template <class Channels>
    bool drive(Step& step, AcquireFsm& fsm, const Channels& channels) {
        switch (step.next) {
            case Next::subscribe:
                // Subscribe first, then look again: a change between the last look and the
                // subscription would otherwise go unnoticed.
                step = fsm.subscribed(subscribe(channels()), Clock::now());
                return true;
            case Next::wait:
                wait(step.until);
                step = fsm.waited(Clock::now());
                return true;
            case Next::sleep:
                sleep(step.until);
                step = fsm.waited(Clock::now());
                return true;
            default:
                return false;
        }
    }

  private:
    ClientImpl& c_;
    const AcquireOptions& how_;
    std::optional<Subscription> sub_;
};

}  // namespace deadbolt::detail
