// RWLock: many readers or one writer, across processes.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "deadbolt/lease.hpp"
#include "deadbolt/mutex.hpp"
#include "deadbolt/options.hpp"

namespace deadbolt {

/// A readers-writer lock shared by every process using the same server and name: any number
/// of readers, or one writer. Satisfies TimedLockable (the writer) and SharedTimedLockable (the
/// readers), so std::unique_lock and std::shared_lock work. Writers are not starved: a
/// waiting writer claims the lock, new readers then wait, and the readers already in finish
/// (the claim lapses after waiter_ttl if its writer dies). The writer's lease carries a fence;
/// a reader's fence() is 0. Both kinds of lease are renewed. Throws as Mutex. lock(),
/// try_lock...(), unlock() and lease() are the writer's.
class RWLock : public detail::MutexFront {
  public:
    /// Takes over other's holdings (other holds nothing after).
    RWLock(RWLock&&) noexcept;
    RWLock& operator=(RWLock&&) = delete;
    /// Releases the write lease and every read lease still held; never throws.
    ~RWLock();

    /// Waits for shared access (no writer holds or claims the lock).
    void lock_shared();
    /// As lock_shared(); reports failure through ec.
    void lock_shared(std::error_code& ec) noexcept;
    /// One attempt at shared access; false if a writer holds or claims the lock.
    bool try_lock_shared();
    template <class Rep, class Period>
    bool try_lock_shared_for(const std::chrono::duration<Rep, Period>& d) {
        return lock_shared_until(clock::now() + std::chrono::ceil<clock::duration>(d), nullptr);
    }
    template <class Clock, class Duration>
    bool try_lock_shared_until(const std::chrono::time_point<Clock, Duration>& t) {
        return lock_shared_until(
            clock::now() + std::chrono::ceil<clock::duration>(t - Clock::now()), nullptr);
    }
    /// Releases the calling thread's latest shared holding; never throws.
    void unlock_shared() noexcept;
    /// The calling thread's latest read lease. Throws LockError(not_owner) when it has none.
    Lease& shared_lease();

  private:
    friend class Client;
    RWLock(std::shared_ptr<detail::ClientImpl> client, std::string name, MutexOptions options);
    bool lock_shared_until(clock::time_point deadline, std::error_code* ec);

    mutable std::mutex m_;
    std::vector<std::pair<std::thread::id, Lease>> readers_;
};

}  // namespace deadbolt
