#include "core/watch.hpp"

#include "core/acquire_fsm.hpp"
#include "core/backoff.hpp"
#include "core/waiting.hpp"

namespace deadbolt::detail {

bool watch(const Store& store, Waker& waker, bool can_sleep_instead,
           const std::function<Status(Look&)>& look, const AcquireOptions& how,
           std::chrono::milliseconds unarmed_recheck) {
    AcquireFsm fsm(AcquireRules{.deadline = how.deadline,
                                .can_sleep_instead = can_sleep_instead,
                                .look_only = true,
                                .no_expiry_recheck = std::chrono::milliseconds(0),
                                .unarmed_recheck = unarmed_recheck,
                                .seed = random_seed()},
                   Clock::now());
    bool looked = false;  // a stop request still gets one look: observers return what they saw
    for (Step step = fsm.start(Clock::now());;) {
        if (step.unsubscribe) waker.disarm();
        if (drive_wait(step, fsm, waker, store, how)) continue;
        switch (step.next) {
            case Next::attempt: {
                if (looked && how.cancel.stop_requested()) {
                    step = fsm.cancelled(Clock::now());
                    break;
                }
                Look found;
                Attempted a;
                a.status = look(found);
                looked = true;
                a.acquired = found.done;
                a.pttl = found.ttl;
                a.wake_spent = found.wake_spent;
                step = fsm.attempted(a, Clock::now());
                break;
            }
            case Next::subscribe:  // drive_wait's
            case Next::wait:
            case Next::sleep:
                break;
            case Next::confirm:  // a look has nothing to confirm
            case Next::granted:
                return true;
            case Next::failed:
                if (step.status.ec == make_error_code(errc::not_acquired) ||
                    step.status.ec == make_error_code(errc::cancelled))
                    return false;
                step.status.throw_if_error();
                return false;
        }
    }
}

}  // namespace deadbolt::detail
