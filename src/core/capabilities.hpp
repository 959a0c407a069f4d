// What an engine may offer besides acquisitions, one interface per capability (DESIGN section
// 12). An engine's store implements those it offers and hands them out through Store's
// accessors (null where it does not, or not as connected: Redlock keeps no latch); a
// primitive asks for its capability with offered(), which throws the store's refusal, naming
// the engine and the reason. Adding a primitive adds its capability here and touches only the
// engines that offer it.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.hpp"
#include "core/validity.hpp"
#include "deadbolt/acquire_options.hpp"
#include "deadbolt/fenced_data.hpp"
#include "deadbolt/leader_election.hpp"
#include "deadbolt/lock_status.hpp"
#include "deadbolt/rate_limiter.hpp"

namespace deadbolt::detail {

class Holding;

/// CountDownLatch: a count that opens at zero, waited on without polling.
class Latches {
  public:
    static constexpr std::string_view kWhat = "CountDownLatch";
    virtual ~Latches() = default;
    /// Sets name's count unless it is set already (set says which); it opens by itself after
    /// ttl.
    virtual Status latch_set(const std::string& name, std::int64_t count,
                             std::chrono::milliseconds ttl, bool& set) = 0;
    /// Counts name down by one; opened is true for the call that opened it.
    virtual Status latch_count_down(const std::string& name, bool& opened) = 0;
    /// name's count now (0 = open); wrong_type when something else lives under it.
    virtual Status latch_count(const std::string& name, std::int64_t& count) = 0;
    /// Waits until name opens: true, or false when how's deadline passes or it is cancelled.
    /// Throws deadbolt exceptions for other errors.
    virtual bool latch_wait(const std::string& name, const AcquireOptions& how) = 0;
};

/// LeaderElection besides its campaign (which is a claim): proclaiming and observing.
class Elections {
  public:
    static constexpr std::string_view kWhat = "LeaderElection";
    virtual ~Elections() = default;
    /// The term held by token (a campaign's) now proclaims value; ours false when the term
    /// ended.
    virtual Status proclaim(const std::string& name, const std::string& token,
                            std::string_view value, bool& ours) = 0;
    /// Who leads name's election now.
    virtual Status leader(const std::string& name, Leader& out) = 0;
    /// Waits until name's leader differs from seen (or how's deadline passes, or a stop is
    /// requested) and returns the leader then. Throws deadbolt exceptions for other errors.
    virtual Leader observe(const std::string& name, const Leader& seen,
                           const AcquireOptions& how) = 0;
};

/// Semaphores' permits, counted and handled by id besides their claims.
class Permits {
  public:
    static constexpr std::string_view kWhat = "PermitExpirableSemaphore";
    virtual ~Permits() = default;
    /// Releases permit id of name, held by anyone (released false: not held).
    virtual Status permit_release(const std::string& name, std::string_view id, bool& released) = 0;
    /// Keeps permit id of name for keep more (extended false: not held).
    virtual Status permit_extend(const std::string& name, std::string_view id,
                                 std::chrono::milliseconds keep, bool& extended) = 0;
    /// How many of name's `permits` permits are held now (expired ones not counted).
    virtual Status permits_in_use(const std::string& name, int permits, int& in_use) = 0;
};

/// RateLimiter: a token bucket kept by the engine.
class RateLimits {
  public:
    static constexpr std::string_view kWhat = "RateLimiter";
    virtual ~RateLimits() = default;
    /// Takes n tokens from name's bucket of limit if it has them.
    virtual Status rate_take(const std::string& name, const RateLimit& limit, std::int64_t n,
                             RateDecision& out) = 0;
};

/// What a client sees without holding, and what an operator does: status, list, force-unlock.
class Admin {
  public:
    static constexpr std::string_view kWhat = "status, list and force_unlock";
    virtual ~Admin() = default;
    /// The status of each of names (out: one per name, with the name's own error, e.g.
    /// wrong_type for foreign data under it). Fails when the engine cannot be asked at all.
    virtual Status statuses(const std::vector<std::string>& names,
                            std::vector<std::pair<LockStatus, Status>>& out) = 0;
    /// The names whose lock entries match the glob pattern.
    virtual Status lock_names(std::string_view pattern, std::vector<std::string>& names) = 0;
    /// Frees name whatever holds it, waking its waiters; kind: what held it ("free": nothing).
    /// Fails with the store's refusal where it cannot be done as connected (Redlock).
    virtual Status force_unlock(const std::string& name, std::string& kind) = 0;
};

/// Fenced data: values that accept a write only from the newest fence.
class FencedData {
  public:
    static constexpr std::string_view kWhat = "fenced data";
    virtual ~FencedData() = default;
    /// The fenced value under key with its version.
    virtual Status fenced_get(std::string_view key, FencedValue& out) = 0;
    /// Writes value under key unless fence is older than the last one accepted there or
    /// (version not empty) the version moved.
    virtual Status fenced_write(std::string_view key, std::string_view value, std::uint64_t fence,
                                std::string_view version, FencedResult& out) = 0;
};

/// A write checked against the lock in the same atomic step (Lease::put_if_current).
class HeldWrites {
  public:
    static constexpr std::string_view kWhat = "put_if_current";
    virtual ~HeldWrites() = default;
    /// Writes value under key in one atomic step with the check that h is still ours (put
    /// false, nothing written: it is not).
    virtual Status put_if_held(const Holding& h, std::string_view key, std::string_view value,
                               Clock::time_point by, bool& put) = 0;
};

}  // namespace deadbolt::detail
