// How a blocking driver of the acquire machine waits: arm the engine's wake-up, wait for it,
// or sleep when there is none. Shared by acquisitions and by watchers (latch, election).
#pragma once

#include <algorithm>
#include <stop_token>

#include "core/acquire_fsm.hpp"
#include "core/store.hpp"
#include "core/threads.hpp"
#include "deadbolt/acquire_options.hpp"

namespace deadbolt::detail {

/// By when arming a wake-up must succeed: a command's time, or the caller's deadline if sooner.
inline Clock::time_point arm_deadline(const Store& store, const AcquireOptions& how) {
    auto by = store.deadline();
    return how.deadline ? std::min(by, *how.deadline) : by;
}

/// Does step's subscribe (arming waker by arm_deadline(store, how)), wait or sleep and feeds
/// the result to fsm; false for any other step, which is the driver's own.
inline bool drive_wait(Step& step, AcquireFsm& fsm, Waker& waker, const Store& store,
                       const AcquireOptions& how) {
    switch (step.next) {
        case Next::subscribe:
            // Arm first, then look again: a change between the last look and the arming
            // would otherwise go unnoticed. The deadline is worked out here, not by the caller
            // at every step: a clock read each, three per uncontended acquisition.
            step = fsm.subscribed(waker.arm(arm_deadline(store, how)), Clock::now());
            return true;
        case Next::wait:
            waker.wait(step.until);
            step = fsm.waited(Clock::now());
            return true;
        case Next::sleep:
            sleep_until(step.until, how.cancel);
            step = fsm.waited(Clock::now());
            return true;
        default:
            return false;
    }
}

}  // namespace deadbolt::detail
