// ReentrantMutex: a distributed lock its owner may take again while holding it.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <vector>

#include "deadbolt/lease.hpp"
#include "deadbolt/options.hpp"

namespace deadbolt {

namespace detail {
struct ClientImpl;
}

/// A lock that one owner may hold several times; it is free again when every holding was
/// released. The hold count lives on the server (a hash, like Redisson's), so every handle
/// and process using the same owner id agrees on it. The owner is this client + the calling
/// thread unless an explicit owner id is given. The fence is issued on the first holding and
/// stays the same for re-entries. TimedLockable. Threads talk to the server directly (no
/// local queue: another thread is another owner).
class ReentrantMutex {
  public:
    using clock = std::chrono::steady_clock;

    /// Takes over other's holdings (other holds nothing after).
    ReentrantMutex(ReentrantMutex&&) noexcept;
    ReentrantMutex& operator=(ReentrantMutex&&) = delete;
    /// Releases every holding this handle still has; never throws.
    ~ReentrantMutex();

    /// Waits until the calling owner holds the lock (once more). Throws ConnectionError /
    /// ServerError (wrong_type if the key is not a reentrant lock).
    void lock();
    /// As lock(); reports failure through ec.
    void lock(std::error_code& ec) noexcept;
    /// One attempt; false if another owner holds the lock. Throws as lock().
    bool try_lock();
    /// As try_lock(); false with ec set on error.
    bool try_lock(std::error_code& ec) noexcept;
    /// Waits at most d; false if not obtained in time. Throws as lock().
    template <class Rep, class Period>
    bool try_lock_for(const std::chrono::duration<Rep, Period>& d) {
        return lock_until(clock::now() + std::chrono::ceil<clock::duration>(d), nullptr);
    }
    /// Waits until t; false if not obtained in time. Throws as lock().
    template <class Clock, class Duration>
    bool try_lock_until(const std::chrono::time_point<Clock, Duration>& t) {
        return lock_until(clock::now() + std::chrono::ceil<clock::duration>(t - Clock::now()),
                          nullptr);
    }

    /// Drops the calling owner's latest holding (the lock frees when the count reaches 0).
    /// Never throws; a failure goes to on_lost. Does nothing if the owner holds nothing here.
    /// A release whose reply was lost is not sent again while the owner holds on (it may
    /// have run, and would take another hold): if it had not run, that hold stays until the
    /// owner's holdings stop renewing it and it expires.
    void unlock() noexcept;

    /// The calling owner's first holding (its fence is the lock's). Throws LockError(not_owner)
    /// when the calling owner holds nothing through this handle.
    Lease& lease();
    /// How many times the calling owner holds the lock through this handle.
    std::size_t hold_count() const;
    /// The owner id the calling thread acquires as.
    std::string owner() const;
    const std::string& name() const noexcept { return name_; }

  private:
    friend class Client;
    /// owner empty = client id + thread; otherwise every handle with this owner id is one owner.
    ReentrantMutex(std::shared_ptr<detail::ClientImpl> client, std::string name,
                   MutexOptions options, std::string owner);
    bool lock_until(clock::time_point deadline, std::error_code* ec);

    std::shared_ptr<detail::ClientImpl> client_;
    std::string name_;
    MutexOptions options_;
    std::string owner_;
    mutable std::mutex m_;
    std::map<std::string, std::vector<Lease>> held_;  // by owner id
};

}  // namespace deadbolt
