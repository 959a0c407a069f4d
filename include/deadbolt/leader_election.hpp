// LeaderElection: one leader at a time among every process that campaigns under a name.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "deadbolt/acquire_options.hpp"
#include "deadbolt/lease.hpp"
#include "deadbolt/options.hpp"

namespace deadbolt {

namespace detail {
struct ClientImpl;
}

/// Longest value a leader may proclaim, in bytes.
inline constexpr std::size_t kMaxLeaderValueBytes = std::size_t{1024} * 1024;

/// Who leads an election now, as the server sees it.
struct Leader {
    bool elected = false;              ///< Somebody leads.
    std::string value{};               ///< What the leader proclaimed (an address, an id...).
    std::uint64_t term = 0;            ///< Its term: the fence of its election, higher for
                                       ///< every new leader.
    std::chrono::milliseconds ttl{0};  ///< Until its term ends unless renewed.

    /// Same leader, same value (ttl is not compared).
    bool same_as(const Leader& o) const {
        return elected == o.elected && term == o.term && value == o.value;
    }
};

/// Leader election in the manner of etcd's concurrency.Election: campaign() blocks until this
/// handle leads; the leader's term is a fenced, auto-renewed Lease, so at most one leader holds
/// any term, a later leader always has a higher term, and a lost term fires the lease's stop
/// token and on_lost like any lost lock. Observers are woken by a publish on every change
/// (elected, proclaimed, resigned) and at the leader's expiry; nobody polls.
class LeaderElection {
  public:
    using clock = std::chrono::steady_clock;

    /// Takes over other's term (other leads nothing after).
    LeaderElection(LeaderElection&&) noexcept;
    LeaderElection& operator=(LeaderElection&&) = delete;
    /// Resigns if leading; never throws.
    ~LeaderElection();

    /// Waits until this handle leads with value; returns its term (also kept: term()). Throws
    /// UsageError if it already leads or value is over kMaxLeaderValueBytes, LockError
    /// (not_acquired when how.deadline passes, cancelled), ConnectionError / ServerError.
    Lease& campaign(std::string_view value, const AcquireOptions& how = {});
    /// Replaces the leader's value and tells every observer. Throws LockError(not_owner) when
    /// this handle does not lead (any more), UsageError for a value too long,
    /// ConnectionError / ServerError.
    void proclaim(std::string_view value);
    /// Gives up the leadership so the next candidate is elected at once. Never throws: a term
    /// already lost is reported through on_lost. No-op when not leading.
    void resign() noexcept;
    /// The current term. Throws LockError(not_owner) when this handle does not lead.
    Lease& term();
    /// True while this handle holds a term (it may have been lost since; see term()).
    bool leading() const noexcept;

    /// The leader now (one round trip). Throws ConnectionError / ServerError.
    Leader leader() const;
    /// Waits until the leader differs from seen (another leader, a new value, or none) and
    /// returns it; returns the unchanged leader when how.deadline passes or how.cancel is
    /// requested. Throws ConnectionError / ServerError.
    Leader observe(const Leader& seen, const AcquireOptions& how = {}) const;

    const std::string& name() const noexcept { return name_; }

  private:
    friend class Client;
    LeaderElection(std::shared_ptr<detail::ClientImpl> client, std::string name,
                   MutexOptions options);
    std::shared_ptr<detail::ClientImpl> client_;
    std::string name_;
    MutexOptions options_;
    mutable std::mutex m_;
    std::optional<Lease> term_;
};

}  // namespace deadbolt
