// Results of asynchronous calls on their way to an asyncio loop: deadbolt's event loop pushes
// them without the GIL and wakes the asyncio loop through an eventfd it reads.
#pragma once

#include <pybind11/pybind11.h>

#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "deadbolt/lease.hpp"
#include "refs.hpp"

namespace deadbolt::python {

/// A queue of finished operations for one asyncio loop. Thread-safe.
class Completions {
  public:
    /// Throws std::system_error when no eventfd can be made.
    Completions();
    Completions(const Completions&) = delete;
    Completions& operator=(const Completions&) = delete;
    ~Completions();
    /// The descriptor the loop watches (loop.add_reader): readable while results wait.
    int fileno() const noexcept { return fd_; }
    /// Queues target's result (an error, or success with an optional lease) and wakes the loop.
    /// Any thread, no GIL needed; never throws (without memory the result is lost).
    void push(Ref target, std::error_code ec, std::string why, std::optional<Lease> lease) noexcept;
    /// Takes what waits, as (target, exception or None, Lease or None) tuples. GIL held.
    py::list drain();

  private:
    struct Item {
        Ref target;
        std::error_code ec;
        std::string why;
        std::optional<Lease> lease;
    };
    int fd_;
    std::mutex m_;
    std::vector<Item> items_;
};

/// Defines deadbolt._deadbolt.Completions.
void define_completions(py::module_& m);

}  // namespace deadbolt::python
