// Signals as bytes on a pipe: a handler (any of the client's threads may take the signal)
// writes the signal's number, and the command reads it in its own time, from a poll or a
// blocking read. Installed after connecting, so a signal during a slow connect just ends the
// process, as it would any command.
#pragma once

#include <initializer_list>
#include <vector>

namespace deadbolt::cli {

class SignalPipe {
  public:
    /// Catches sigs from now on (one SignalPipe per process). Throws std::system_error when
    /// the pipe cannot be made.
    explicit SignalPipe(std::initializer_list<int> sigs);
    /// Gives the signals back their default actions.
    ~SignalPipe();
    SignalPipe(const SignalPipe&) = delete;
    SignalPipe& operator=(const SignalPipe&) = delete;

    /// The end to poll for POLLIN.
    int fd() const { return read_; }
    /// The next signal caught, or 0 when none is pending; wait: block until one comes.
    int next(bool wait = false) const;

  private:
    int read_ = -1;
    std::vector<int> sigs_;
};

}  // namespace deadbolt::cli
