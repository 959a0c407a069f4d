#include "core/local_queue.hpp"

#include <algorithm>

namespace deadbolt::detail {

LocalQueue::Result LocalQueue::enter(const std::string& key,
                                     std::optional<Clock::time_point> deadline,
                                     const std::stop_token& cancel,
                                     const std::function<void()>& on_wait) {
    std::unique_lock lk(m_);
    Line& line = lines_[key];
    if (!line.busy && line.waiting.empty()) {
        line.busy = true;
        return Result::entered;
    }
    std::uint64_t id = next_id_++;
    line.waiting.push_back(id);
    if (on_wait) {  // the line stays: this thread is in it
        lk.unlock();
        on_wait();
        lk.lock();
    }
    auto my_turn = [&] { return !line.busy && line.waiting.front() == id; };
    bool ok =
        deadline ? cv_.wait_until(lk, cancel, *deadline, my_turn) : cv_.wait(lk, cancel, my_turn);
    if (ok) {
        line.waiting.erase(line.waiting.begin());
        line.busy = true;
        return Result::entered;
    }
    std::erase(line.waiting, id);
    if (!line.busy && line.waiting.empty()) lines_.erase(key);
    cv_.notify_all();  // the next in line may now be at the front
    return cancel.stop_requested() ? Result::cancelled : Result::timed_out;
}

void LocalQueue::leave(const std::string& key) {
    std::lock_guard lk(m_);
    auto it = lines_.find(key);
    if (it == lines_.end()) return;
    it->second.busy = false;
    if (it->second.waiting.empty())
        lines_.erase(it);
    else
        cv_.notify_all();
}

}  // namespace deadbolt::detail
