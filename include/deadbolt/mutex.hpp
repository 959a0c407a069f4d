// Mutex: a distributed TimedLockable over an engine's lease, with fencing and auto-renewal.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <system_error>
#include <vector>

#include "deadbolt/lease.hpp"
#include "deadbolt/options.hpp"

namespace deadbolt {

class Mutex;
struct AcquireOptions;

namespace detail {
struct ClientImpl;
class SpareClaim;
/// How a Mutex takes its lock: plain (SET NX), fair (FIFO queue), or as an RWLock's writer.
enum class LockFlavor : unsigned char { plain, fair, write, multi };
using AsyncDone = std::function<void(std::error_code)>;
/// Starts taking m's lock on its client's event loop (async_lock); done runs there once.
/// Never throws.
void start_lock(Mutex& m, const AcquireOptions& how, std::stop_token also, AsyncDone done) noexcept;
}  // namespace detail

/// A lock shared by every process that uses the same server and name. Satisfies the
/// standard TimedLockable requirements, so std::unique_lock and std::scoped_lock work.
/// Threads of one process queue locally; one of them at a time talks to the server.
/// Not reentrant: a thread that locks twice waits for itself until its deadline.
class Mutex {
  public:
    using clock = std::chrono::steady_clock;

    /// Takes over other's holding (other holds nothing after).
    Mutex(Mutex&&) noexcept;
    Mutex& operator=(Mutex&&) = delete;
    /// Unlocks if held; never throws.
    ~Mutex();

    /// Waits until the lock is ours (no polling: wakes on release or expiry).
    /// Throws ConnectionError/ServerError when the server cannot be used.
    void lock();
    /// As lock(); reports failure through ec.
    void lock(std::error_code& ec) noexcept;
    /// One attempt, no waiting. Returns false if someone else holds the lock;
    /// throws ConnectionError/ServerError when the server cannot be used.
    bool try_lock();
    /// As try_lock(); false with ec set on error, false with ec clear if held by another.
    bool try_lock(std::error_code& ec) noexcept;

    /// Waits at most d; false if the lock was not obtained in time. Throws as lock().
    template <class Rep, class Period>
    bool try_lock_for(const std::chrono::duration<Rep, Period>& d) {
        return lock_until(clock::now() + std::chrono::ceil<clock::duration>(d));
    }
    /// Waits until t; false if the lock was not obtained in time. Throws as lock().
    template <class Clock, class Duration>
    bool try_lock_until(const std::chrono::time_point<Clock, Duration>& t) {
        return lock_until(clock::now() + std::chrono::ceil<clock::duration>(t - Clock::now()));
    }
    /// As try_lock_for(d); false with ec set on error.
    template <class Rep, class Period>
    bool try_lock_for(const std::chrono::duration<Rep, Period>& d, std::error_code& ec) noexcept {
        return lock_until(clock::now() + std::chrono::ceil<clock::duration>(d), ec);
    }

    /// Releases the lock (compare-and-delete, wakes waiters). Never throws: a lease that
    /// was already lost or a lost reply is reported through on_lost.
    void unlock() noexcept;

    /// The current holding. Throws LockError(not_owner) when this Mutex is not locked.
    Lease& lease();
    /// True while this Mutex holds a lease (it may have been lost since; see lease()).
    bool owns_lock() const noexcept;
    /// The lock name.
    const std::string& name() const noexcept { return name_; }

  private:
    friend void detail::start_lock(Mutex& m, const AcquireOptions& how, std::stop_token also,
                                   detail::AsyncDone done) noexcept;
    // Made by Client; FairMutex, MultiLock and an RWLock's writer hold a Mutex of their flavor
    // (MultiLock reads its names, RWLock's readers its client and options).
    friend class Client;
    friend class MultiLock;
    friend class RWLock;
    Mutex(std::shared_ptr<detail::ClientImpl> client, std::string name, MutexOptions options,
          detail::LockFlavor flavor = detail::LockFlavor::plain);
    /// A lock over several names at once (MultiLock); name() is how messages call it.
    Mutex(std::shared_ptr<detail::ClientImpl> client, std::vector<std::string> names,
          MutexOptions options);

    bool lock_until(clock::time_point deadline);
    bool lock_until(clock::time_point deadline, std::error_code& ec) noexcept;

    std::shared_ptr<detail::ClientImpl> client_;
    std::string name_;
    MutexOptions options_;
    mutable std::mutex m_;  // guards lease_ between the locking thread and unlock()
    std::optional<Lease> lease_;
    detail::LockFlavor flavor_;
    std::vector<std::string> names_;
    // The claim kept between this lock's acquisitions (null once moved from).
    std::unique_ptr<detail::SpareClaim> spare_;
};

namespace detail {

/// The TimedLockable front of a lock that is one Mutex of its flavor (FairMutex, MultiLock, an
/// RWLock's writer): every call goes to that Mutex and fails as Mutex's does.
class MutexFront {
  public:
    using clock = Mutex::clock;

    /// Waits until the lock is ours (no polling: wakes on release, grant or expiry).
    void lock() { lock_.lock(); }
    void lock(std::error_code& ec) noexcept { lock_.lock(ec); }
    /// One attempt, no waiting.
    bool try_lock() { return lock_.try_lock(); }
    bool try_lock(std::error_code& ec) noexcept { return lock_.try_lock(ec); }
    template <class Rep, class Period>
    bool try_lock_for(const std::chrono::duration<Rep, Period>& d) {
        return lock_.try_lock_for(d);
    }
    template <class Rep, class Period>
    bool try_lock_for(const std::chrono::duration<Rep, Period>& d, std::error_code& ec) noexcept {
        return lock_.try_lock_for(d, ec);
    }
    template <class Clock, class Duration>
    bool try_lock_until(const std::chrono::time_point<Clock, Duration>& t) {
        return lock_.try_lock_until(t);
    }
    /// Releases (and wakes or hands over to the next waiter); never throws.
    void unlock() noexcept { lock_.unlock(); }
    /// The current holding. Throws LockError(not_owner) when not locked.
    Lease& lease() { return lock_.lease(); }
    bool owns_lock() const noexcept { return lock_.owns_lock(); }
    const std::string& name() const noexcept { return lock_.name(); }

  protected:
    explicit MutexFront(Mutex lock) : lock_(std::move(lock)) {}
    Mutex lock_;

  private:
    friend Mutex& mutex_of(MutexFront& f) noexcept;
};

/// The Mutex behind a FairMutex, MultiLock or RWLock's writer (async_lock takes it).
inline Mutex& mutex_of(MutexFront& f) noexcept {
    return f.lock_;
}

}  // namespace detail

}  // namespace deadbolt
