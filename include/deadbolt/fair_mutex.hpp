// FairMutex: a lock granted in FIFO order across processes.
#pragma once

#include "deadbolt/mutex.hpp"

namespace deadbolt {

/// A lock whose waiters, in every process, get it in the order they asked for it: a release
/// hands the lock directly to the longest-waiting live waiter and wakes only that one (no
/// barging, no thundering herd). Each waiter keeps its place alive every waiter_ttl / 3; a
/// waiter that dies is skipped after waiter_ttl. Every grant carries a new fence.
/// TimedLockable; each call fails as Mutex's does. Use one kind of lock per name: a plain
/// Mutex on the same name would not queue.
class FairMutex : public detail::MutexFront {
  private:
    friend class Client;
    explicit FairMutex(Mutex lock) : MutexFront(std::move(lock)) {}
};

}  // namespace deadbolt
