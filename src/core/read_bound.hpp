// A blocking socket's reads bounded by a deadline. A client that waits for a reply in a
// blocking read pays one system call per round trip, where a poll and a non-blocking read pay
// two; the deadline is then the socket's receive timeout (SO_RCVTIMEO), and setting that is a
// system call too, so it is set to half of what is left only when it is longer than that or
// under a quarter of it: back-to-back requests, whose deadlines are as far off, set it once
// per connection.
#pragma once

#include <chrono>

namespace deadbolt::detail {

class ReadBound {
  public:
    using Clock = std::chrono::steady_clock;
    /// The socket fd's receive timeout is at most left and at least a quarter of it (at
    /// least 1 ms, so a read at the deadline still waits a little); false when it cannot be
    /// set (errno says why).
    bool fit(int fd, Clock::duration left) noexcept;
    /// A new socket: nothing is set on it yet.
    void forget() noexcept { set_ = {}; }

  private:
    Clock::duration set_{};  // zero: none set
};

}  // namespace deadbolt::detail
