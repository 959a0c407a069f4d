// Semaphore: N permits shared by every process using the same server and name.
#pragma once

#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>

#include "deadbolt/lease.hpp"
#include "deadbolt/options.hpp"

namespace deadbolt {

namespace detail {
struct ClientImpl;
}

/// A counting semaphore across processes, modelled on std::counting_semaphore: at most
/// `permits` holders at once, never more. Each permit this handle takes is a lease (renewed
/// while held), so a crashed holder's permit comes back when its TTL runs out, and a permit
/// lost that way fires on_lost. Waiting sleeps until a release or the earliest expiry.
/// Every user of a name must use the same permit count (else invalid_argument).
class Semaphore {
  public:
    using clock = std::chrono::steady_clock;

    /// Takes over other's permits (other holds none after).
    Semaphore(Semaphore&&) noexcept;
    Semaphore& operator=(Semaphore&&) = delete;
    /// Releases every permit this handle still holds; never throws.
    ~Semaphore();

    /// Waits for a permit. Throws ConnectionError / ServerError / UsageError.
    void acquire();
    /// As acquire(); reports failure through ec.
    void acquire(std::error_code& ec) noexcept;
    /// One attempt; false if all permits are taken. Throws as acquire().
    bool try_acquire();
    /// Waits at most d; false if no permit came in time. Throws as acquire().
    template <class Rep, class Period>
    bool try_acquire_for(const std::chrono::duration<Rep, Period>& d) {
        return acquire_until(clock::now() + std::chrono::ceil<clock::duration>(d), nullptr);
    }
    /// Waits until t; false if no permit came in time. Throws as acquire().
    template <class Clock, class Duration>
    bool try_acquire_until(const std::chrono::time_point<Clock, Duration>& t) {
        return acquire_until(clock::now() + std::chrono::ceil<clock::duration>(t - Clock::now()),
                             nullptr);
    }

    /// Returns the oldest permit this handle holds. Throws LockError(not_owner) if it holds
    /// none (releasing more than was acquired) or the permit had expired meanwhile.
    void release();
    /// As release(); reports through ec, never throws.
    void release(std::error_code& ec) noexcept;

    /// Permits this handle holds now.
    std::size_t held() const;
    /// The permit count every user of this name agreed on.
    int max() const noexcept { return permits_; }
    /// Permits free on the server now (a snapshot). Throws ConnectionError / ServerError.
    int available() const;
    const std::string& name() const noexcept { return name_; }

  private:
    friend class Client;
    /// permits >= 1 (UsageError otherwise, from Client::semaphore).
    Semaphore(std::shared_ptr<detail::ClientImpl> client, std::string name, int permits,
              MutexOptions options);
    bool acquire_until(clock::time_point deadline, std::error_code* ec);

    std::shared_ptr<detail::ClientImpl> client_;
    std::string name_;
    int permits_;
    MutexOptions options_;
    mutable std::mutex m_;
    std::deque<Lease> leases_;
};

}  // namespace deadbolt
