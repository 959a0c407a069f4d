// Results of asynchronous calls on their way to an asyncio loop: deadbolt's event loop pushes
// them without the GIL and wakes the asyncio loop through an eventfd it reads.
#pragma once

#include <pybind11/pybind11.h>

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "deadbolt/async.hpp"
#include "deadbolt/lease.hpp"
#include "refs.hpp"

namespace deadbolt::python {

/// A queue of finished operations for one asyncio loop. Thread-safe.
class Completions : public std::enable_shared_from_this<Completions> {
  public:
    /// Throws std::system_error when no eventfd can be made.
    Completions();
    Completions(const Completions&) = delete;
    Completions& operator=(const Completions&) = delete;
    ~Completions();
    /// The descriptor the loop watches (loop.add_reader): readable while results wait.
    int fileno() const noexcept { return fd_; }
    /// Queues target's result (an error, or success with an optional lease) and wakes the loop;
    /// on from's own thread, after the replies from has ready now (one wake for the burst).
    /// Any thread, no GIL needed; never throws (without memory the result is lost).
    void push(const detail::LoopHandle& from, Ref target, std::error_code ec, std::string why,
              std::optional<Lease> lease) noexcept;
    /// Takes what waits, as (target, exception or None, Lease or None) tuples. GIL held.
    py::list drain();
    /// Keeps start for to's thread until flush(): the asyncio loop's calls of one turn go to
    /// deadbolt's loop in one post. The asyncio loop's thread, GIL held.
    void send(const detail::LoopHandle& to, std::function<void()> start);
    /// Hands what send() kept to each loop in one post. The asyncio loop's thread, GIL held.
    void flush();

  private:
    void wake() noexcept;

    struct Item {
        Ref target;
        std::error_code ec;
        std::string why;
        std::optional<Lease> lease;
    };
    int fd_;
    std::mutex m_;
    std::vector<Item> items_;
    bool wake_posted_ = false;  // under m_: a loop will wake the asyncio loop after its burst
    detail::LoopCalls outbox_;  // GIL held
};

/// Defines deadbolt._deadbolt.Completions.
void define_completions(py::module_& m);

}  // namespace deadbolt::python
