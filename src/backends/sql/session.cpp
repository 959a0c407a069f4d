#include "backends/sql/session.hpp"

#include <poll.h>

#include <algorithm>
#include <cerrno>

namespace deadbolt::detail {

std::string SqlRows::at(std::size_t r, std::size_t c) const {
    if (null(r, c)) return {};
    return *cells[r * columns + c];
}

SqlRows& SqlAnswers::next(std::size_t columns) {
    if (n_ == out_.size()) out_.emplace_back();
    SqlRows& rows = out_[n_++];
    rows.cells.clear();
    rows.columns = columns;
    return rows;
}

bool SqlRows::null(std::size_t r, std::size_t c) const {
    return r >= size() || c >= columns || !cells[r * columns + c];
}

bool wait_socket(int fd, bool write, Clock::time_point by, int wake_fd, bool& woken) {
    pollfd fds[2] = {{fd, static_cast<short>(write ? POLLOUT : POLLIN), 0}, {wake_fd, POLLIN, 0}};
    for (;;) {
        int ms = -1;
        if (by != Clock::time_point::max()) {
            auto left = std::chrono::ceil<std::chrono::milliseconds>(by - Clock::now()).count();
            if (left <= 0) return false;
            ms = static_cast<int>(std::min<long long>(left, 1 << 30));
        }
        int n = ::poll(fds, wake_fd >= 0 ? 2 : 1, ms);
        if (n < 0 && errno == EINTR) continue;
        if (n > 0 && wake_fd >= 0 && (fds[1].revents & POLLIN)) return woken = true, false;
        return n != 0;  // an error shows on the socket's next use
    }
}

}  // namespace deadbolt::detail
