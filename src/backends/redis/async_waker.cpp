#include "backends/redis/async_waker.hpp"

#include <fmt/format.h>

#include "backends/redis/store.hpp"

namespace deadbolt::detail {

AsyncWaker::AsyncWaker(RedisStore& store, Channels channels, std::chrono::milliseconds standby)
    : store_(store),
      channels_(std::move(channels)),
      standby_(standby),
      timer_(store.client.loop().io()) {}

AsyncWaker::~AsyncWaker() {
    disarm();
}

void AsyncWaker::arm(Clock::time_point until, std::function<void(Status)> done) {
    disarm();
    subscribed_to_ = channels_();
    store_.subscriber().subscribe_start(subscribed_to_);
    if (standby_.count() > 0)
        for (const auto& ch : subscribed_to_)
            if (Subscriber::is_mailbox(ch)) store_.subscriber().standby(ch, standby_);
    state_ = State::arming;
    armed_ = std::move(done);
    store_.armed(this, true);
    timer_.expires_at(until);
    timer_.async_wait([this, alive = std::weak_ptr<char>(alive_)](const std::error_code& ec) {
        if (ec || alive.expired() || state_ != State::arming) return;
        Status failed;
        store_.subscriber().subscribed(subscribed_to_, seqs_, &failed);
        fail_arm(!failed.ok() ? failed
                              : Status::error(errc::timeout,
                                              "subscribing to release notifications timed out"));
    });
    look();  // the channels may be subscribed already (another waiter's)
}

void AsyncWaker::fail_arm(Status why) {
    auto done = std::move(armed_);
    disarm();
    if (done) done(std::move(why));
}

void AsyncWaker::wait(std::function<void()> woken) {
    woken_ = std::move(woken);
    look();  // a message between the arming and now counts
}

void AsyncWaker::look() {
    auto& sub = store_.subscriber();
    if (state_ == State::arming) {
        auto st = sub.subscribed(subscribed_to_, seqs_);
        if (!st) return;
        if (!st->ok()) return fail_arm(std::move(*st));
        state_ = State::armed;
        timer_.cancel();
        if (auto done = std::move(armed_)) done({});
        return;
    }
    if (state_ == State::armed && woken_ && sub.moved(subscribed_to_, seqs_)) {
        auto woken = std::move(woken_);
        woken_ = nullptr;
        woken();
    }
}

void AsyncWaker::disarm() noexcept {
    if (state_ == State::idle) return;
    state_ = State::idle;
    store_.armed(this, false);
    armed_ = nullptr;
    woken_ = nullptr;
    timer_.cancel();
    try {
        for (const auto& ch : subscribed_to_) store_.subscriber().unsubscribe(ch);
    } catch (...) {
        // Out of memory queueing UNSUBSCRIBE: the interest lingers until the next reconnect.
    }
    subscribed_to_.clear();
}

}  // namespace deadbolt::detail
