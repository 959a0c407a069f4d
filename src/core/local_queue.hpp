// LocalQueue: threads of one process that want the same lock line up here first, FIFO, so
// only one of them at a time talks to the server (no network traffic for local contention).
#pragma once

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

namespace deadbolt::detail {

class LocalQueue {
  public:
    using Clock = std::chrono::steady_clock;
    enum class Result { entered, timed_out, cancelled };

    /// Waits FIFO until this thread is the one working on key; on_wait (when set) runs once,
    /// unlocked, before a thread that must wait starts to.
    Result enter(const std::string& key, std::optional<Clock::time_point> deadline,
                 const std::stop_token& cancel, const std::function<void()>& on_wait = {});
    /// Lets the next thread in line work on key.
    void leave(const std::string& key);

  private:
    struct Line {
        bool busy = false;
        // A vector, not a deque: an uncontended enter may make a line and leave drop it, and
        // an empty deque allocates twice. Lines are short; taking the front moves the few left.
        std::vector<std::uint64_t> waiting;
    };
    using Lines = std::map<std::string, Line>;
    // The lines of the names that hash to it, under a lock of their own: threads working on
    // different names (16 threads on 16 names: their enters and leaves were a third of the
    // futex calls of a PostgreSQL cycle) mostly take different locks.
    struct Shard {
        std::mutex m;
        std::condition_variable_any cv;
        Lines lines;
        // Nodes of dropped lines: an uncontended turn makes a line and drops it again, and a
        // node with its key's string cost two allocations per turn.
        std::vector<Lines::node_type> spare;
        std::uint64_t next_id = 0;

        // key's line, made from a spare node when there is one.
        Line& line_for(const std::string& key);
        // A line nobody is in now: kept while the shard has few (a name taken again, as a
        // thread's next turn usually is, finds its line made), else dropped.
        void idle(Lines::iterator it);
        // Drops a line nobody is in; its node is kept for the next one.
        void drop(Lines::iterator it);
    };
    static constexpr std::size_t kShards = 16;
    Shard& shard_of(const std::string& key);

    std::array<Shard, kShards> shards_;
};

}  // namespace deadbolt::detail
