// MemorySpace: the engine of one memory://NAME, shared by every client and memory::Space of
// that name in the process. One mutex keeps its state; every call takes a Turn, which waits
// out a stall and may lose its reply (the faults a test drives); a change wakes whoever
// waits, blocking or not, and a loss tells the clients to check their holdings.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>

#include "backends/memory/state.hpp"
#include "core/status.hpp"
#include "deadbolt/memory.hpp"

namespace deadbolt::detail {

class MemorySpace {
  public:
    /// The space of name, made when nobody holds it.
    static std::shared_ptr<MemorySpace> named(const std::string& name);
    explicit MemorySpace(std::string name) : name_(std::move(name)) {}

    const std::string& name() const { return name_; }
    Clock::time_point now() const {
        return Clock::now() + Clock::duration(offset_.load(std::memory_order_acquire));
    }

    /// One call on the space: holds its mutex from a stall's end to the call's end.
    class Turn {
      public:
        /// Waits out a stall until by (then status() is timeout and nothing may be done).
        Turn(MemorySpace& s, Clock::time_point by, memory::Call kind);
        ~Turn();
        Turn(const Turn&) = delete;
        Turn& operator=(const Turn&) = delete;
        const Status& status() const { return status_; }
        MemState& state() { return space_.state_; }
        Clock::time_point now() const { return now_; }
        /// Waiters look again after this call.
        void changed() { changed_ = true; }
        /// The generation this call leaves (with its own change).
        std::uint64_t generation() const { return space_.generation_ + (changed_ ? 1 : 0); }
        /// What the caller hears once the call is done: ok, or unknown_outcome when its reply
        /// is to be lost.
        Status answer();

      private:
        MemorySpace& space_;
        std::unique_lock<std::mutex> lock_;
        memory::Call kind_;
        Status status_;
        Clock::time_point now_;
        bool changed_ = false;
    };

    /// Changes so far: a waiter looks again once it moved past what its last look saw.
    std::uint64_t generation() const;
    /// Until the generation moves past seen, until, or cancel; false at until or cancel.
    bool wait_change(std::uint64_t seen, Clock::time_point until, const std::stop_token& cancel);
    /// Calls woken once, from any thread, when the generation moves past seen (at once if it
    /// did). Returns an id for forget().
    std::uint64_t on_change(std::uint64_t seen, std::function<void()> woken);
    void forget(std::uint64_t id) noexcept;

    /// A client's check of its holdings, asked for after a loss the client did not see.
    std::uint64_t add_doubter(std::function<void()> doubt);
    void remove_doubter(std::uint64_t id) noexcept;
    /// Asks every client to check its holdings (a loss they did not cause). Not under a Turn.
    void doubt_all() noexcept;

    // The faults (memory::Space).
    int lose(const std::string& name) noexcept;
    int lose_all() noexcept;
    void lose_replies(int n, memory::Call which) noexcept;
    void stall(bool on) noexcept;
    void advance(Clock::duration d) noexcept;
    std::optional<std::string> value(const std::string& key);

  private:
    // After the mutex is let go: wakes the waiters of a change.
    void wake() noexcept;
    const std::string name_;
    std::atomic<Clock::rep> offset_{0};
    mutable std::mutex m_;
    std::condition_variable_any cv_;
    MemState state_;
    std::uint64_t generation_ = 0;
    bool stalled_ = false;
    std::map<memory::Call, int> lost_replies_;
    std::uint64_t next_id_ = 0;
    std::map<std::uint64_t, std::pair<std::uint64_t, std::function<void()>>> wakers_;
    std::mutex doubters_m_;  // apart: a doubt reaches a client's renewer, never the space
    std::map<std::uint64_t, std::function<void()>> doubters_;
    std::uint64_t next_doubter_ = 0;
};

}  // namespace deadbolt::detail
