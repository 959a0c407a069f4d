// CancelFd: a descriptor that becomes readable once a stop is requested, so that a statement
// waiting on its socket (a wait inside the server) can be cut short by the caller's cancel.
// Made at its first use: most acquisitions never wait, and an eventfd per acquisition showed
// in the uncontended cycle's profile.
#pragma once

#include <functional>
#include <optional>
#include <stop_token>
#include <utility>

namespace deadbolt::detail {

class CancelFd {
  public:
    explicit CancelFd(std::stop_token cancel) : cancel_(std::move(cancel)) {}
    ~CancelFd();
    CancelFd(const CancelFd&) = delete;
    CancelFd& operator=(const CancelFd&) = delete;

    /// Readable once cancel is requested; -1 when no descriptor could be made (then a wait
    /// runs to its own end). Not thread-safe: the waiting thread's.
    int fd();
    /// Ready for another wait, cut short by cancel: the old descriptor (perhaps readable
    /// already) is closed, and the next fd() makes a new one.
    void reset(std::stop_token cancel) noexcept;

  private:
    std::stop_token cancel_;
    int fd_ = -1;
    std::optional<std::stop_callback<std::function<void()>>> on_cancel_;
};

}  // namespace deadbolt::detail
