// The asynchronous driver of the acquire machine: the same AcquireFsm as the blocking
// driver, stepped on the client's event loop through the claim's asynchronous forms, so one
// thread keeps any number of acquisitions in flight.
#pragma once

#include <functional>
#include <memory>
#include <stop_token>

#include "core/lock_spec.hpp"
#include "core/status.hpp"
#include "deadbolt/acquire_options.hpp"
#include "deadbolt/lease.hpp"

namespace deadbolt::detail {

struct ClientImpl;

using AcquireDone = std::function<void(Status, Lease)>;

/// Starts acquiring spec as how says; done(status, lease) runs once on the client's event
/// loop (an empty lease with the reason on failure, as acquire_lease() reports it). A stop
/// requested on how.cancel or on also ends a wait (cancelled). Does not line up behind this
/// process's threads (the blocking local queue would hold the loop). Never throws: a failure
/// to start is reported through done.
void async_acquire(std::shared_ptr<ClientImpl> client, LockSpec spec, AcquireOptions how,
                   std::stop_token also, AcquireDone done) noexcept;

/// Releases lease on the client's event loop; done(status) runs there once (not_owner when
/// it was no longer ours). Never throws.
void async_release(Lease lease, std::function<void(Status)> done) noexcept;

}  // namespace deadbolt::detail
