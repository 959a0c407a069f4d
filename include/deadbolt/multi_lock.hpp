// MultiLock: several locks taken together, all or none.
#pragma once

#include <string>
#include <vector>

#include "deadbolt/mutex.hpp"

namespace deadbolt {

/// Holds every one of its names or none of them: one atomic script takes them all, so a
/// failed or abandoned attempt never leaves a partial set behind. Each name is the same key a
/// Mutex of that name uses, so a MultiLock and a Mutex on a shared name exclude each other.
/// Its one Lease renews all the names together and is lost (stop token, on_lost) as soon as any
/// of them is; Lease::fences() gives each name's fencing token. Waiters wake on the release of
/// any name. TimedLockable; fails as Mutex does. Single-server URLs only for now (Redis Cluster
/// will take names that span slots in a fixed order with rollback).
class MultiLock : public Mutex {
  public:
    /// names already checked (Client::multi_lock does).
    MultiLock(std::shared_ptr<detail::ClientImpl> client, std::vector<std::string> names,
              MutexOptions options);

    /// The names, in the order given (the order of Lease::fences()).
    const std::vector<std::string>& names() const noexcept { return names_held(); }
};

}  // namespace deadbolt
