// The command must not outlive `deadbolt run`: if run dies without dismissing it (kill -9, a
// crash, a signal it does not handle), a small guard process kills the command's process group,
// whose lease stops being renewed at that moment.
#pragma once

#include <sys/types.h>

namespace deadbolt::cli {

class Guard {
  public:
    /// Forks the guard (it blocks what this process blocks, so terminal signals pass it by).
    /// Throws std::runtime_error when no pipe or process can be had.
    Guard();
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
    /// Dismisses the guard if dismiss() was not called (a normal return from run).
    ~Guard();

    /// The process group the guard kills if this process dies; call once, right after fork.
    void watch(pid_t group) noexcept;
    /// This process outlived the command and dealt with its group: the guard exits quietly.
    void dismiss() noexcept;

  private:
    int fd_ = -1;
    pid_t pid_ = -1;
};

/// In the command's child between fork and exec: dies with its parent (covers the moment before
/// Guard::watch). Returns false when the parent is already gone.
bool die_with_parent(pid_t parent) noexcept;

}  // namespace deadbolt::cli
