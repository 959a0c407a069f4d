// Telling a client's observer what happened to a lock, without letting it break the caller.
#pragma once

#include <chrono>

#include "deadbolt/events.hpp"

namespace deadbolt::detail {

inline void tell(const LockObserver& observer, const LockEvent& e) noexcept {
    if (!observer) return;
    try {
        observer(e);
    } catch (...) {
        // An observer is for metrics and logs: its failure must not become the lock's.
    }
}

template <class D>
std::chrono::microseconds micros(D d) {
    return std::chrono::duration_cast<std::chrono::microseconds>(d);
}

}  // namespace deadbolt::detail
