// ServerClock: steers the wall clock of the servers started with its env() (through the
// LD_PRELOAD shim in clock_shim.c): jumps and rate changes, never backwards.
#pragma once

#include <chrono>
#include <string>
#include <vector>

struct deadbolt_shim_clock;

namespace deadbolt::torture {

class ServerClock {
  public:
    /// Creates the shared page in dir; the clock starts true (offset 0, rate 1).
    explicit ServerClock(const std::string& dir);
    ~ServerClock();
    ServerClock(const ServerClock&) = delete;
    ServerClock& operator=(const ServerClock&) = delete;

    /// NAME=value entries that put a server process on this clock.
    std::vector<std::string> env() const;
    /// Moves the steered clock forward at once.
    void jump(std::chrono::milliseconds forward);
    /// From now on the steered clock runs `rate` times as fast as the real one (no step).
    void set_rate(double rate);

  private:
    template <class F>
    void update(F&& f);
    std::string path_;
    deadbolt_shim_clock* page_ = nullptr;
};

}  // namespace deadbolt::torture
