#include "core/read_bound.hpp"

#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>

namespace deadbolt::detail {

bool ReadBound::fit(int fd, Clock::duration left) noexcept {
    // Kept while it is at most what is left and not far below it: one short wait (near a
    // deadline) must not leave every later wait waking each millisecond.
    if (set_ > Clock::duration::zero() && set_ <= left && set_ * 4 >= left) return true;
    auto bound = std::max<Clock::duration>(left / 2, std::chrono::milliseconds(1));
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(bound).count();
    timeval tv{.tv_sec = us / 1000000, .tv_usec = us % 1000000};
    if (::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0) return false;
    set_ = bound;
    return true;
}

}  // namespace deadbolt::detail
