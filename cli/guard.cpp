#include "guard.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdexcept>

namespace deadbolt::cli {
namespace {

constexpr char kDismiss = 'd';

// The guard's whole life, async-signal-safe only (the parent may have threads): read the
// group, then wait for a dismissal or for EOF, which means the parent is gone.
[[noreturn]] void guard_main(int fd) {
    prctl(PR_SET_NAME, "deadbolt-guard", 0, 0, 0);
    pid_t group = 0;
    if (read(fd, &group, sizeof group) != sizeof group) _exit(0);
    char c = 0;
    ssize_t n;
    do {
        n = read(fd, &c, 1);
    } while (n < 0);
    // SIGKILL at once: the lease is no longer renewed, and nobody is left to wait out a grace.
    if (n == 0 || c != kDismiss) kill(-group, SIGKILL);
    _exit(0);
}

}  // namespace

Guard::Guard() {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) throw std::runtime_error("cannot start the guard: pipe2 failed");
    pid_ = fork();
    if (pid_ == 0) {
        close(p[1]);
        guard_main(p[0]);
    }
    close(p[0]);
    if (pid_ < 0) {
        close(p[1]);
        throw std::runtime_error("cannot start the guard: fork failed");
    }
    fd_ = p[1];
}

Guard::~Guard() {
    dismiss();
}

void Guard::watch(pid_t group) noexcept {
    (void)!write(fd_, &group, sizeof group);
}

void Guard::dismiss() noexcept {
    if (fd_ < 0) return;
    (void)!write(fd_, &kDismiss, 1);
    close(fd_);
    fd_ = -1;
    waitpid(pid_, nullptr, 0);
}

bool die_with_parent(pid_t parent) noexcept {
    // The death signal is tied to the thread that forked us: run forks from its main thread,
    // which lives until run exits.
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) return false;
    return getppid() == parent;
}

}  // namespace deadbolt::cli
