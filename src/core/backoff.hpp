// Backoff: how long to pause before retry n. Pure; unit-tested.
#pragma once

#include <chrono>
#include <cstdint>

namespace deadbolt::detail {

/// "Equal jitter": half of min(max, base * 2^attempt) plus a random part of the other half,
/// so retries spread out but never collapse to zero. Uses a thread-local generator.
std::chrono::milliseconds jittered_backoff(unsigned attempt, std::chrono::milliseconds base,
                                           std::chrono::milliseconds max);

/// The same with the random part given: r in [0, 1).
std::chrono::milliseconds jittered_backoff(unsigned attempt, std::chrono::milliseconds base,
                                           std::chrono::milliseconds max, double r);

/// A seed for a machine's own generator, from the thread-local one: the hot path must not
/// build a std::random_device per acquisition (it was half of an async cycle's CPU).
std::uint64_t random_seed();

/// Uniform random duration in [0, max]; 0 when max <= 0.
std::chrono::milliseconds random_jitter(std::chrono::milliseconds max);

}  // namespace deadbolt::detail
