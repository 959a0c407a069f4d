#include "backends/redis/net/subscription.hpp"

namespace deadbolt::detail {

Status Subscription::subscribe(std::vector<std::string> channels, Clock::time_point deadline,
                               const std::stop_token& cancel) {
    unsubscribe();
    std::vector<std::uint64_t> seqs;
    if (Status st = s_.subscribe_all(channels, deadline, seqs); !st.ok()) return st;
    channels_ = std::move(channels);
    seqs_ = std::move(seqs);
    if (cancel.stop_possible() && !channels_.empty())
        on_cancel_.emplace(cancel, [this] { s_.poke(channels_.front()); });
    return {};
}

void Subscription::standby(std::chrono::milliseconds after) {
    for (const auto& ch : channels_)
        if (Subscriber::is_mailbox(ch)) s_.standby(ch, after);
}

void Subscription::unsubscribe() noexcept {
    on_cancel_.reset();
    try {
        for (const auto& ch : channels_) s_.unsubscribe(ch);
    } catch (...) {
        // Out of memory queueing UNSUBSCRIBE: the interest lingers until the next reconnect.
    }
    channels_.clear();
    seqs_.clear();
}

void Subscription::wait(Clock::time_point deadline) {
    s_.wait_any(channels_, seqs_, deadline);
}

}  // namespace deadbolt::detail
