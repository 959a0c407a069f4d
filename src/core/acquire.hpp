// The acquire loop shared by every primitive and every engine (DESIGN sections 6, 7 and 12):
// the local queue, then the acquire machine driven through a store's claim. A primitive says
// only what it wants (a LockSpec); waiting, validity, late grants, lost replies, cleanup and
// cancellation are decided here once.
#pragma once

#include <memory>

#include "core/lock_spec.hpp"
#include "core/status.hpp"

namespace deadbolt {
struct AcquireOptions;
class Lease;
}  // namespace deadbolt

namespace deadbolt::detail {

struct ClientImpl;
class SpareClaim;

/// Acquires spec on the client's store as how says (deadline, cancel, on_wait). Returns the
/// lease; on failure an empty Lease, with status saying why (not_acquired when the deadline
/// passed, cancelled, invalid_argument for a spec the store cannot keep, or the engine's
/// error). With spare (the lock object's), the claim is taken from it and left in it again.
Lease acquire_lease(const std::shared_ptr<ClientImpl>& client, const LockSpec& spec,
                    const AcquireOptions& how, Status& status, SpareClaim* spare = nullptr);

}  // namespace deadbolt::detail
