// Lease: the handle of one holding of a lock.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace deadbolt {

class Lease;
namespace detail {
struct LeaseState;
/// Moves the state out of l, leaving it empty (the asynchronous release takes it so).
std::shared_ptr<LeaseState> take_state(Lease& l) noexcept;
/// The Lease of a granted holding (what acquisitions hand out).
Lease make_lease(std::shared_ptr<LeaseState> state) noexcept;
}  // namespace detail

/// One name's fencing token within a lease.
struct NamedFence {
    std::string name;
    std::uint64_t fence = 0;
};

/// One successful acquisition of a lock: who holds it (token), its fencing token, and how
/// long this process may trust that it still holds it. Move-only; the destructor releases.
class Lease {
  public:
    using clock = std::chrono::steady_clock;

    /// An empty lease: holds nothing (valid() is false).
    Lease() = default;
    Lease(Lease&&) noexcept = default;
    /// Releases the held lease first (never throws), then takes other's.
    Lease& operator=(Lease&& other) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    /// Releases if still held; never throws (a failure goes to on_lost).
    ~Lease();

    /// True if this object refers to an acquisition (even one released since).
    explicit operator bool() const noexcept { return s_ != nullptr; }

    /// The lock name as given by the caller.
    const std::string& name() const;
    /// The owner token stored in the lock key: "host:pid:" and 128 random bits in hex.
    const std::string& token() const;
    /// Fencing token: strictly greater than every earlier acquisition's of this name. For a
    /// MultiLock, the fence of its first name (see fences()).
    std::uint64_t fence() const;
    /// Every name this lease holds with its fence: one entry, or one per MultiLock name in the
    /// order given. Each is strictly greater than every earlier acquisition's of that name.
    std::vector<NamedFence> fences() const;
    /// Until then the lock is ours: measured from before the request was sent, minus a drift
    /// margin of 1% of the TTL + 2 ms; moved forward by every successful renewal. On the
    /// client's clock (ClientOptions::clock, steady_clock unless injected).
    clock::time_point valid_until() const;
    /// now < valid_until() and not lost and not released.
    bool valid() const;
    /// True once the lease is known lost: renewal refused, key gone, validity ran out.
    bool lost() const;
    /// True until release() or destruction.
    bool held() const;
    /// Requested when the lease is lost, so work can watch it and stop. It fires first, before
    /// the observer and on_lost run (on the thread that found the loss), so work stops at once;
    /// asked for after the loss, it is already requested. Made on the first call, which throws
    /// std::bad_alloc when there is no memory for it.
    std::stop_token stop_token() const;

    /// Sets the remaining TTL on the server to ttl (compare-and-set on the token).
    /// Throws LockError(not_owner) if the lease is gone, ConnectionError on transport
    /// failure (unknown_outcome if the reply was lost), UsageError for a bad ttl.
    void extend(std::chrono::milliseconds ttl);
    /// As extend(ttl); reports failure through ec instead of throwing.
    void extend(std::chrono::milliseconds ttl, std::error_code& ec) noexcept;

    /// Asks the server whether this lease still holds the lock (the key holds our token).
    /// Throws ConnectionError / ServerError when it cannot tell.
    bool is_current() const;
    /// As is_current(); returns false and sets ec when it cannot tell.
    bool is_current(std::error_code& ec) const noexcept;

    /// Writes value under key in the same atomic step that checks this lease still holds the
    /// lock, so a holder that lost it writes nothing: the engines' advice for data kept in
    /// them. On etcd key is the engine's own key (no prefix), written by one Txn comparing the
    /// lock key's create revision (the fence); on ZooKeeper key is a path under the chroot
    /// (escaped as lock names are), written by one multi that checks the lock's node exists;
    /// on PostgreSQL key is a key of the schema's `fenced` table (read it with fenced_get),
    /// written on the very session that holds the lock. Returns false, with nothing written
    /// and the lease marked lost, when the lock is no longer ours. Throws UsageError on Redis
    /// and MariaDB (guard data by fence(): Client::fenced_set), for an empty key, or on etcd
    /// one inside a held lock's directory (it would queue as a contender); LockError(not_owner)
    /// after release(); ConnectionError when it cannot tell (unknown_outcome: it may be
    /// written).
    bool put_if_current(std::string_view key, std::string_view value);
    /// As put_if_current(); returns false and sets ec instead of throwing.
    bool put_if_current(std::string_view key, std::string_view value, std::error_code& ec) noexcept;

    /// Deletes the lock key if it still holds our token and wakes waiters. Idempotent.
    /// Throws LockError(not_owner) if the lock was no longer ours, ConnectionError with
    /// unknown_outcome if the reply was lost (the key then expires with its TTL).
    void release();
    /// As release(); reports through ec, never throws.
    void release(std::error_code& ec) noexcept;

    /// Waits until the outcome of release() is known, or deadline. A release whose reply was
    /// lost (unknown_outcome) is retried in the background once the server answers again;
    /// that retry tells whether the lease was still ours up to the release. Returns empty
    /// when it was (released now), not_owner when it was not (gone, or another's: a loss,
    /// also reported through on_lost and the stop token), unknown_outcome when no answer
    /// came by deadline or before the lease would have expired. Returns at once once known;
    /// invalid_argument before release() or on an empty lease. Never throws.
    std::error_code settle(clock::time_point deadline) const noexcept;

  private:
    friend std::shared_ptr<detail::LeaseState> detail::take_state(Lease& l) noexcept;
    friend Lease detail::make_lease(std::shared_ptr<detail::LeaseState> state) noexcept;
    explicit Lease(std::shared_ptr<detail::LeaseState> state) : s_(std::move(state)) {}
    std::shared_ptr<detail::LeaseState> s_;
};

}  // namespace deadbolt
