// FairMutex: a Mutex that grants its lock in FIFO order across processes.
#pragma once

#include "deadbolt/mutex.hpp"

namespace deadbolt {

/// A Mutex whose waiters, in every process, get the lock in the order they asked for it: a
/// release hands the lock directly to the longest-waiting live waiter and wakes only that one
/// (no barging, no thundering herd). Each waiter keeps its place alive every waiter_ttl / 3;
/// a waiter that dies is skipped after waiter_ttl. Every grant carries a new fence.
/// TimedLockable; fails as Mutex does. Use one kind of lock per name: a plain Mutex on the
/// same name would not queue.
class FairMutex : public Mutex {
  public:
    FairMutex(std::shared_ptr<detail::ClientImpl> client, std::string name, MutexOptions options)
        : Mutex(std::move(client), std::move(name), std::move(options), detail::LockFlavor::fair) {}
};

}  // namespace deadbolt
