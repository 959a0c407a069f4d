// Deadlines for acquire() used across the tests.
#pragma once

#include <chrono>

#include "deadbolt/client.hpp"

namespace deadbolt::test {

/// One attempt, no waiting.
inline AcquireOptions no_wait() {
    return {.deadline = std::chrono::steady_clock::now()};
}
/// Wait at most d.
inline AcquireOptions wait_for(std::chrono::steady_clock::duration d) {
    return {.deadline = std::chrono::steady_clock::now() + d};
}

}  // namespace deadbolt::test
