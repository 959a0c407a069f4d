#include "signals.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <system_error>

namespace deadbolt::cli {
namespace {

// Lock-free, so reading it in a handler is safe.
std::atomic<int> write_end{-1};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void caught(int sig) {
    const int saved = errno;
    const auto c = static_cast<unsigned char>(sig);
    if (::write(write_end.load(), &c, 1) < 0) {
        // Full: it already holds signals the reader has yet to see, which is enough.
    }
    errno = saved;
}

}  // namespace

SignalPipe::SignalPipe(std::initializer_list<int> sigs) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0)
        throw std::system_error(errno, std::generic_category(), "signal pipe");
    read_ = fds[0];
    write_end = fds[1];
    sigs_ = sigs;
    struct sigaction sa {};
    sa.sa_handler = caught;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (int sig : sigs) ::sigaction(sig, &sa, nullptr);
}

SignalPipe::~SignalPipe() {
    struct sigaction sa {};
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    for (int sig : sigs_) ::sigaction(sig, &sa, nullptr);
    // The pipe stays open: a handler that began before the reset may still write to it, and
    // a closed number could by then name another file.
}

int SignalPipe::next(bool wait) const {
    for (;;) {
        unsigned char c = 0;
        if (::read(read_, &c, 1) == 1) return c;
        if (!wait) return 0;
        pollfd p{read_, POLLIN, 0};
        ::poll(&p, 1, -1);  // EINTR too: look again
    }
}

}  // namespace deadbolt::cli
