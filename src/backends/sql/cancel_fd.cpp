#include "backends/sql/cancel_fd.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

namespace deadbolt::detail {

int CancelFd::fd() {
    if (fd_ >= 0 || on_cancel_) return fd_;
    fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    // A stop requested already runs the callback here, so the descriptor is readable at once.
    if (fd_ >= 0)
        on_cancel_.emplace(cancel_, [fd = fd_] {
            std::uint64_t one = 1;
            [[maybe_unused]] auto n = ::write(fd, &one, sizeof one);
        });
    return fd_;
}

CancelFd::~CancelFd() {
    reset({});
}

void CancelFd::reset(std::stop_token cancel) noexcept {
    on_cancel_.reset();  // before the close: the callback writes to the descriptor
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    cancel_ = std::move(cancel);
}

}  // namespace deadbolt::detail
