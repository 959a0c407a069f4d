// Replication: the sync_replicas check after a lock's write (Redisson's checkLockSyncedSlaves).
#pragma once

#include "backends/redis/net/connection.hpp"
#include "backends/redis/net/status.hpp"

namespace deadbolt::detail {

/// WAIT until ep's sync_replicas replicas acknowledged every write this connection made, for
/// at most sync_timeout. ok when enough did (or sync_replicas is 0); errc::not_replicated
/// when fewer did; a transport error otherwise. WAIT blocks the connection meanwhile.
Status confirm_replicated(Connection& c, Clock::time_point deadline);

}  // namespace deadbolt::detail
