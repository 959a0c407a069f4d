// take: one acquisition for the lock-like front ends, in both error styles (throw, or
// std::error_code), so each primitive states only its spec.
#pragma once

#include <chrono>
#include <memory>
#include <system_error>

#include "core/acquire.hpp"
#include "core/lease_state.hpp"
#include "deadbolt/lease.hpp"

namespace deadbolt::detail {

/// Acquires spec by deadline (time_point::max() = wait as long as it takes). True with out
/// set when granted; false when the deadline passed. Other failures throw, or when ec is
/// given they are stored there (and false returned) without throwing.
bool take(const std::shared_ptr<ClientImpl>& client, const AcquireSpec& spec,
          Clock::time_point deadline, Lease& out, std::error_code* ec);

/// The same for callers that hold AcquireOptions (deadline, cancel, on_wait): a passed deadline
/// is LockError(not_acquired), thrown or stored in ec.
Lease take(const std::shared_ptr<ClientImpl>& client, const AcquireSpec& spec,
           const AcquireOptions& how, std::error_code* ec);

}  // namespace deadbolt::detail
