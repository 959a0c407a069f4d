// PermitExpirableSemaphore: N permits, each with an id and a lease of its own.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>

#include "deadbolt/acquire_options.hpp"
#include "deadbolt/lease.hpp"
#include "deadbolt/options.hpp"

namespace deadbolt {

namespace detail {
struct ClientImpl;
}

/// A permit: a Lease whose token() is the permit id.
using Permit = Lease;

/// A semaphore of `permits` permits where each permit is a handle of its own (Redisson's
/// RPermitExpirableSemaphore): it has an id (token()), its own TTL, can be renewed (auto or
/// extend()), and can be released by id from any process. A crashed holder's permit comes
/// back when its lease ends. Shares its server state with Semaphore of the same name.
class PermitExpirableSemaphore {
  public:
    /// Takes a permit, waiting as how says. Throws LockError(not_acquired) when the deadline
    /// passes, LockError(cancelled), ConnectionError, ServerError, UsageError.
    Permit acquire(const AcquireOptions& how = {}) const;
    /// As acquire(how); returns an empty Permit and sets ec instead of throwing.
    Permit acquire(const AcquireOptions& how, std::error_code& ec) const noexcept;
    /// One attempt: an empty Permit when none is free. Throws as acquire().
    Permit try_acquire() const;

    /// Releases the permit with this id, held by anyone. Returns false when no such permit is
    /// held (released already or expired). Throws ConnectionError / ServerError.
    bool release(std::string_view permit_id) const;
    /// Sets the remaining TTL of the permit with this id to ttl. Returns false when no such
    /// permit is held. Throws ConnectionError / ServerError / UsageError (bad ttl).
    bool extend(std::string_view permit_id, std::chrono::milliseconds ttl) const;
    /// Permits free on the server now (a snapshot). Throws ConnectionError / ServerError.
    int available() const;
    int max() const noexcept { return permits_; }
    const std::string& name() const noexcept { return name_; }

  private:
    friend class Client;
    PermitExpirableSemaphore(std::shared_ptr<detail::ClientImpl> client, std::string name,
                             int permits, MutexOptions options);
    std::shared_ptr<detail::ClientImpl> client_;
    std::string name_;
    int permits_;
    MutexOptions options_;
};

}  // namespace deadbolt
