// SteeredClock: a clock that runs off a real one (CLOCK_REALTIME for the lock server, through
// the LD_PRELOAD shim in clock_shim.c; CLOCK_MONOTONIC for a worker's lease clock) and can be
// jumped forward or run at another rate, never backwards. Its page is shared with the readers
// (a file the server maps; a mapping forked workers inherit).
#pragma once

#include <time.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

struct deadbolt_shim_clock;

namespace deadbolt::torture {

class SteeredClock {
  public:
    /// Creates the page at path; the clock starts true (offset 0, rate 1).
    SteeredClock(std::string path, clockid_t base);
    ~SteeredClock();
    SteeredClock(const SteeredClock&) = delete;
    SteeredClock& operator=(const SteeredClock&) = delete;

    /// NAME=value entries that put a process's wall clock on this one (CLOCK_REALTIME only);
    /// shim_dir holds libdeadbolt_clock_shim.so (by default, this executable's directory).
    std::vector<std::string> env(const std::string& shim_dir = "") const;
    /// The shared page, for readers in this process or its forks (deadbolt_steer()).
    const deadbolt_shim_clock* page() const { return page_; }
    /// Moves the steered clock forward at once.
    void jump(std::chrono::milliseconds forward);
    /// From now on the steered clock runs `rate` times as fast as the real one (no step).
    void set_rate(double rate);

  private:
    template <class F>
    void update(F&& f);
    std::int64_t real_ns() const;
    std::string path_;
    clockid_t base_;
    deadbolt_shim_clock* page_ = nullptr;
};

}  // namespace deadbolt::torture
