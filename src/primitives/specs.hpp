// Specs: which keys, scripts and waiting rules each primitive uses on Redis (DESIGN section
// 5: every auxiliary key shares the main key's slot). The acquire loop does the rest.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/acquire.hpp"

namespace deadbolt::detail {

/// Mutex: the redis-py compatible string key.
AcquireSpec mutex_spec(std::string_view prefix, std::string_view name, const MutexOptions& o);
/// FairMutex: the same key plus a FIFO queue; releases grant the lock to the next waiter.
AcquireSpec fair_spec(std::string_view prefix, std::string_view name, const MutexOptions& o);
/// RWLock's writer: the mutex key; a waiting writer's claim holds back new readers.
AcquireSpec write_spec(std::string_view prefix, std::string_view name, const MutexOptions& o);
/// RWLock's readers: holders in a zset beside the writer's key.
AcquireSpec read_spec(std::string_view prefix, std::string_view name, const MutexOptions& o);
/// ReentrantMutex: a hash of owner -> hold count; owner is the token.
AcquireSpec reentrant_spec(std::string_view prefix, std::string_view name, const MutexOptions& o,
                           std::string_view owner);
/// Semaphore and PermitExpirableSemaphore: one permit per holder in a zset of at most permits.
AcquireSpec semaphore_spec(std::string_view prefix, std::string_view name, const MutexOptions& o,
                           int permits);

/// MultiLock: the Mutex key of every name, taken together by one token (names checked by the
/// caller: non-empty, distinct).
AcquireSpec multi_spec(std::string_view prefix, const std::vector<std::string>& names,
                       const MutexOptions& o);

/// LeaderElection: a campaign for the election hash; its term renews and resigns like a lock.
AcquireSpec election_spec(std::string_view prefix, std::string_view name, const MutexOptions& o,
                          std::string_view value);
/// Where an election announces changes to observers.
std::string observe_channel(std::string_view prefix, std::string_view name);

/// How a MultiLock's lease is named in messages: its first name and how many more.
std::string multi_display_name(const std::vector<std::string>& names);

struct ClientImpl;
/// Semaphore permits held now (not expired) under name. Throws on server errors.
int permits_in_use(ClientImpl& c, std::string_view name);

}  // namespace deadbolt::detail
