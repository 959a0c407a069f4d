#include "core/local_queue.hpp"

#include <algorithm>

namespace deadbolt::detail {
namespace {
// Spare nodes kept: about the names a process's threads hold at once.
constexpr std::size_t kSpareLines = 16;
}  // namespace

LocalQueue::Line& LocalQueue::line_for(const std::string& key) {
    if (auto it = lines_.find(key); it != lines_.end()) return it->second;
    if (spare_.empty()) return lines_[key];
    auto node = std::move(spare_.back());
    spare_.pop_back();
    node.key() = key;  // reuses the string's room
    return lines_.insert(std::move(node)).position->second;
}

void LocalQueue::drop(Lines::iterator it) {
    if (spare_.size() >= kSpareLines) {
        lines_.erase(it);
        return;
    }
    auto node = lines_.extract(it);
    node.mapped().busy = false;
    node.mapped().waiting.clear();
    spare_.push_back(std::move(node));
}

LocalQueue::Result LocalQueue::enter(const std::string& key,
                                     std::optional<Clock::time_point> deadline,
                                     const std::stop_token& cancel,
                                     const std::function<void()>& on_wait) {
    std::unique_lock lk(m_);
    Line& line = line_for(key);
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
    if (!line.busy && line.waiting.empty()) drop(lines_.find(key));
    cv_.notify_all();  // the next in line may now be at the front
    return cancel.stop_requested() ? Result::cancelled : Result::timed_out;
}

void LocalQueue::leave(const std::string& key) {
    std::lock_guard lk(m_);
    auto it = lines_.find(key);
    if (it == lines_.end()) return;
    it->second.busy = false;
    if (it->second.waiting.empty())
        drop(it);
    else
        cv_.notify_all();
}

}  // namespace deadbolt::detail
