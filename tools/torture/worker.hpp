// Worker: one torture process. Loops acquire -> read register -> think 0..hold -> write
// register+1 and RPUSH its id to the log (plain, or fenced with the lease's fence) -> release,
// recording every step.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

struct deadbolt_shim_clock;

namespace deadbolt::torture {

struct WorkerConfig {
    int id = 0;
    std::string lock;  // adapter kind
    bool fenced = false;
    std::string lock_url;  // deadbolt kinds: redis:// or redlock:// through its proxies
    std::uint16_t lock_port = 0, data_port = 0;
    std::chrono::milliseconds ttl{500};
    std::chrono::milliseconds hold{20};          // think time inside the section: 0..hold
    std::int64_t end_ns = 0;                     // CLOCK_MONOTONIC deadline of the run
    std::string history_path;                    // JSON lines, flushed per event
    std::atomic<int>* holding = nullptr;         // shared with the nemesis: 1 while holding
    const deadbolt_shim_clock* clock = nullptr;  // its lease clock, steered by the nemesis
};

/// Runs until end_ns; returns a process exit code.
int run_worker(const WorkerConfig& c);

}  // namespace deadbolt::torture
