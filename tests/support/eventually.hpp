// eventually: polls a condition that a background activity (a renewal, a failover, a cleanup)
// makes true, for tests that assert the outcome rather than its timing.
#pragma once

#include <chrono>
#include <thread>

namespace deadbolt::test {

/// True as soon as f() is; false if it is still false after `within`.
template <class F>
bool eventually(F f, std::chrono::milliseconds within = std::chrono::seconds(10)) {
    for (auto until = std::chrono::steady_clock::now() + within;
         std::chrono::steady_clock::now() < until;) {
        if (f()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return f();
}

}  // namespace deadbolt::test
