// CancelFd: a descriptor that becomes readable once a stop is requested, so that a statement
// waiting on its socket (a wait inside the server) can be cut short by the caller's cancel.
#pragma once

#include <functional>
#include <optional>
#include <stop_token>

namespace deadbolt::detail {

class CancelFd {
  public:
    explicit CancelFd(const std::stop_token& cancel);
    ~CancelFd();
    CancelFd(const CancelFd&) = delete;
    CancelFd& operator=(const CancelFd&) = delete;

    /// Readable once cancel is requested; -1 when no descriptor could be made (then a wait
    /// runs to its own end).
    int fd() const { return fd_; }

  private:
    int fd_ = -1;
    std::optional<std::stop_callback<std::function<void()>>> on_cancel_;
};

}  // namespace deadbolt::detail
