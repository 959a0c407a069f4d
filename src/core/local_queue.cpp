#include "core/local_queue.hpp"

#include <algorithm>

namespace deadbolt::detail {
namespace {
// Spare nodes kept per shard: about the names a process's threads hold at once, spread.
constexpr std::size_t kSpareLines = 4;
// Idle lines kept per shard: making a line and dropping it on every turn (two rebalances of
// the shard's tree) was a third of an uncontended turn's instructions.
constexpr std::size_t kKeptLines = 4;
}  // namespace

LocalQueue::Shard& LocalQueue::shard_of(const std::string& key) {
    return shards_[std::hash<std::string>{}(key) % kShards];
}

LocalQueue::Line& LocalQueue::Shard::line_for(const std::string& key) {
    if (auto it = lines.find(key); it != lines.end()) return it->second;
    if (spare.empty()) return lines[key];
    auto node = std::move(spare.back());
    spare.pop_back();
    node.key() = key;  // reuses the string's room
    return lines.insert(std::move(node)).position->second;
}

void LocalQueue::Shard::idle(Lines::iterator it) {
    if (lines.size() > kKeptLines) drop(it);
}

void LocalQueue::Shard::drop(Lines::iterator it) {
    if (spare.size() >= kSpareLines) {
        lines.erase(it);
        return;
    }
    auto node = lines.extract(it);
    node.mapped().busy = false;
    node.mapped().waiting.clear();
    spare.push_back(std::move(node));
}

LocalQueue::Result LocalQueue::enter(const std::string& key,
                                     std::optional<Clock::time_point> deadline,
                                     const std::stop_token& cancel,
                                     const std::function<void()>& on_wait) {
    Shard& sh = shard_of(key);
    std::unique_lock lk(sh.m);
    Line& line = sh.line_for(key);
    if (!line.busy && line.waiting.empty()) {
        line.busy = true;
        return Result::entered;
    }
    std::uint64_t id = sh.next_id++;
    line.waiting.push_back(id);
    if (on_wait) {  // the line stays: this thread is in it
        lk.unlock();
        on_wait();
        lk.lock();
    }
    auto my_turn = [&] { return !line.busy && line.waiting.front() == id; };
    bool ok = deadline ? sh.cv.wait_until(lk, cancel, *deadline, my_turn)
                       : sh.cv.wait(lk, cancel, my_turn);
    if (ok) {
        line.waiting.erase(line.waiting.begin());
        line.busy = true;
        return Result::entered;
    }
    std::erase(line.waiting, id);
    if (!line.busy && line.waiting.empty()) sh.idle(sh.lines.find(key));
    sh.cv.notify_all();  // the next in line may now be at the front
    return cancel.stop_requested() ? Result::cancelled : Result::timed_out;
}

void LocalQueue::leave(const std::string& key) {
    Shard& sh = shard_of(key);
    std::lock_guard lk(sh.m);
    auto it = sh.lines.find(key);
    if (it == sh.lines.end()) return;
    it->second.busy = false;
    if (it->second.waiting.empty())
        sh.idle(it);
    else
        sh.cv.notify_all();
}

}  // namespace deadbolt::detail
