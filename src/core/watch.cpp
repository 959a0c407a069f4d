#include "core/watch.hpp"

#include <random>

#include "core/acquire_fsm.hpp"
#include "core/client_impl.hpp"
#include "core/wakeups.hpp"

namespace deadbolt::detail {

bool watch(ClientImpl& c, const std::vector<std::string>& channels,
           const std::function<Status(Look&)>& look, const AcquireOptions& how,
           std::chrono::milliseconds unarmed_recheck) {
    AcquireFsm fsm(AcquireRules{.deadline = how.deadline,
                                .can_sleep_instead = c.nodes->redlock() || c.cluster != nullptr,
                                .look_only = true,
                                .no_expiry_recheck = std::chrono::milliseconds(0),
                                .unarmed_recheck = unarmed_recheck,
                                .seed = std::random_device{}()},
                   Clock::now());
    Wakeups wake(c, how);
    bool looked = false;  // a stop request still gets one look: observers return what they saw
    for (Step step = fsm.start(Clock::now());;) {
        if (step.unsubscribe) wake.unsubscribe();
        if (wake.drive(step, fsm, [&] { return channels; })) continue;
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
                step = fsm.attempted(a, Clock::now());
                break;
            }
            case Next::subscribe:  // wake.drive's
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
