// deadbolt: distributed locks with fencing tokens on the engines linked in (Redis, etcd,
// ZooKeeper, PostgreSQL, MariaDB: one library each). Include this one header.
#pragma once

#include "deadbolt/acl.hpp"
#include "deadbolt/client.hpp"
#include "deadbolt/count_down_latch.hpp"
#include "deadbolt/duration.hpp"
#include "deadbolt/error.hpp"
#include "deadbolt/events.hpp"
#include "deadbolt/fair_mutex.hpp"
#include "deadbolt/fence.hpp"
#include "deadbolt/fenced_data.hpp"
#include "deadbolt/leader_election.hpp"
#include "deadbolt/lease.hpp"
#include "deadbolt/lock_status.hpp"
#include "deadbolt/multi_lock.hpp"
#include "deadbolt/mutex.hpp"
#include "deadbolt/options.hpp"
#include "deadbolt/permit_expirable_semaphore.hpp"
#include "deadbolt/rate_limiter.hpp"
#include "deadbolt/reentrant_mutex.hpp"
#include "deadbolt/rwlock.hpp"
#include "deadbolt/semaphore.hpp"
