// Specs: which keys, scripts and waiting rules each shape uses on Redis (DESIGN section 5:
// every auxiliary key shares the main key's slot). The core's acquire loop does the rest.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <chrono>

#include "backends/redis/scripts.hpp"
#include "core/lock_spec.hpp"

namespace deadbolt::detail {

struct RedisSpec {
    std::string name;                         // the caller's name: messages and Lease::name()
    std::chrono::milliseconds ttl{0};         // MutexOptions::ttl: a Redlock grant's validity
    std::chrono::milliseconds waiter_ttl{0};  // MutexOptions::waiter_ttl
    const Script* script = nullptr;           // KEYS: keys; ARGV: token, px, fence_px, args...
    std::vector<std::string> keys;
    std::vector<std::string> args;
    bool fenced = true;               // grants carry a fence (exclusive holdings)
    const LeaseKind* kind = nullptr;  // renews, releases and checks what was granted
    std::vector<std::string> op_keys;
    // KEYS of extend and check: op_keys without the lines, which only a release touches. A line
    // is there only while someone waits, and a slot that migrates answers a script naming a
    // key it lacks with TRYAGAIN: a renewal must not fail for want of waiters.
    std::vector<std::string> lease_keys;
    // op_keys with each line swapped for a key of its slot that is no line (the lock's own):
    // what a release sends when a migrating slot answers TRYAGAIN for want of the line.
    std::vector<std::string> lineless_keys;
    std::vector<std::string> op_args;
    std::string channel;  // the box: names the lock to the waiters a release wakes
    std::vector<std::string> extra_channels;  // ...and these (a MultiLock's other names)
    std::vector<std::string> names;           // a MultiLock's names, in the order of its fences
    std::string grant_prefix;  // non-empty: sleep on grant_prefix + token instead (a release
                               // grants the lock to one waiter and wakes it alone)
    // Waiting in line (lua/line.cpp): a refused waiter that listens lines up here, and a
    // release wakes the first of the line. Empty: the kind does not (FairMutex queues).
    std::string line;
    char role = 'x';                       // in line: 'r' a reader, 'x' any other kind
    std::chrono::milliseconds standby{0};  // told "next", it looks after this long by itself
    std::string queue_key;                 // threads of this process line up on it; empty = none
    std::string owner;     // fixed token (an owner id); empty = random per acquisition
    bool reentry = false;  // the caller holds it already (a ReentrantMutex re-entry)
    std::chrono::milliseconds refresh{0};  // retry at least this often while waiting, to keep
                                           // a queue entry or a writer's claim alive
    const Script* abandon = nullptr;       // run (op convention) when a waiter gives up
    std::vector<std::string> abandon_keys;
    std::vector<std::string> abandon_args;  // ARGV after {token, box, px, member}
};

/// What spec is on Redis under prefix.
RedisSpec redis_spec(std::string_view prefix, const LockSpec& spec);

/// Mutex: the redis-py compatible string key.
RedisSpec mutex_spec(std::string_view prefix, std::string_view name, const MutexOptions& o);
/// FairMutex: the same key plus a FIFO queue; releases grant the lock to the next waiter.
RedisSpec fair_spec(std::string_view prefix, std::string_view name, const MutexOptions& o);
/// RWLock's writer: the mutex key; a waiting writer's claim holds back new readers.
RedisSpec write_spec(std::string_view prefix, std::string_view name, const MutexOptions& o);
/// RWLock's readers: holders in a zset beside the writer's key.
RedisSpec read_spec(std::string_view prefix, std::string_view name, const MutexOptions& o);
/// ReentrantMutex: a hash of owner -> hold count; owner is the token.
RedisSpec reentrant_spec(std::string_view prefix, std::string_view name, const MutexOptions& o,
                         std::string_view owner);
/// Semaphore and PermitExpirableSemaphore: one permit per holder in a zset of at most permits.
RedisSpec semaphore_spec(std::string_view prefix, std::string_view name, const MutexOptions& o,
                         int permits);

/// MultiLock: the Mutex key of every name, taken together by one token (names checked by the
/// caller: non-empty, distinct).
RedisSpec multi_spec(std::string_view prefix, const std::vector<std::string>& names,
                     const MutexOptions& o);

/// LeaderElection: a campaign for the election hash; its term renews and resigns like a lock.
RedisSpec election_spec(std::string_view prefix, std::string_view name, const MutexOptions& o,
                        std::string_view value);
/// Where an election announces changes to observers.
std::string observe_channel(std::string_view prefix, std::string_view name);

}  // namespace deadbolt::detail
