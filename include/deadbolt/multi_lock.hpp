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
/// any name. TimedLockable; each call fails as Mutex's does; name() is the names joined.
class MultiLock : public detail::MutexFront {
  public:
    /// The names, in the order given (the order of Lease::fences()).
    const std::vector<std::string>& names() const noexcept { return lock_.names_; }

  private:
    friend class Client;
    explicit MultiLock(Mutex lock) : MutexFront(std::move(lock)) {}
};

}  // namespace deadbolt
