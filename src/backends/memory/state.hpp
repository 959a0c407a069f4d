// What a memory space keeps, as plain data: each lock name's holders and waiters, fences,
// latches, buckets and values. Times are on the space's clock; an entry past its time is gone
// (prune() drops it at the next look), as an engine's expired key is.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/lock_spec.hpp"
#include "deadbolt/rate_limiter.hpp"

namespace deadbolt::detail {

using Clock = std::chrono::steady_clock;

/// One holder of a lock: a token (a reentrant owner's id), its fence and its end.
struct MemHold {
    std::string token;
    std::uint64_t fence = 0;  // 0 for readers and permits, which carry none
    Clock::time_point until;
    std::chrono::system_clock::time_point since;  // for status
    int holds = 1;                                // a reentrant owner's count
};

/// A waiter the lock keeps: a FairMutex's place in line, an RWLock writer's claim.
struct MemWaiter {
    std::string token;
    Clock::time_point until;
};

/// One lock name.
struct MemLock {
    Shape shape = Shape::exclusive;  // what holds it now (read: readers; permits: a semaphore)
    std::vector<MemHold> holders;
    std::vector<MemWaiter> line;      // FairMutex waiters in order of arrival
    std::optional<MemWaiter> writer;  // an RWLock writer waiting: new readers stay out
    int permits = 0;                  // a semaphore's count, as its last holder asked
    std::string value;                // a leader's proclamation

    bool held() const { return !holders.empty(); }
    bool idle() const { return holders.empty() && line.empty() && !writer; }
    /// Drops holders, waiters and the writer's claim whose time ended.
    void prune(Clock::time_point now);
    /// The holder of token, or null.
    MemHold* holder(const std::string& token);
    /// Whether token waits here (in line, or as the writer).
    bool waits(const std::string& token) const;
    /// Drops token's place in line and its writer's claim.
    void forget_waiter(const std::string& token);
    /// How long until the first holder's end (the soonest the lock may free), -1 ms if none.
    std::chrono::milliseconds pttl(Clock::time_point now) const;
};

struct MemLatch {
    std::int64_t count = 0;
    Clock::time_point until;
};

struct MemBucket {
    RateLimit limit;
    double tokens = 0;
    Clock::time_point at;
};

struct MemFenced {
    std::optional<std::string> value;
    std::uint64_t version = 0;
    std::uint64_t highest = 0;
};

/// Everything of one space (under its mutex).
struct MemState {
    std::map<std::string, MemLock> locks;
    std::map<std::string, std::uint64_t> fences;  // each name's last fence
    std::map<std::string, MemLatch> latches;
    std::map<std::string, MemBucket> buckets;
    std::map<std::string, MemFenced> fenced;
    std::map<std::string, std::string> values;  // put_if_current's writes

    /// name's lock with its ended parts dropped; null when nothing is kept under it.
    MemLock* lock(const std::string& name, Clock::time_point now);
    /// The next fence of name.
    std::uint64_t next_fence(const std::string& name) { return ++fences[name]; }
};

}  // namespace deadbolt::detail
