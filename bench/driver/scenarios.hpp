// The bench driver's scenarios (README "Measuring"): each prints one JSON object on stdout.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common.hpp"

namespace deadbolt::bench {

/// 1-2: --threads T cycle acquire+release on their own keys until the deadline.
/// deadbolt shares one Client (its pipelining); raw gives each thread its own connection.
int cycle(const Args& a);
/// Sends one command and waits for its reply (throws on a failure).
using ScriptConn = std::function<void(const std::vector<std::string>&)>;
/// What deadbolt sends for one cycle with no library logic around it, cycle after cycle on
/// key until until, each cycle's latency (µs) into lat: the raw contenders' loop.
void script_cycles(const ScriptConn& c, const std::string& key, std::int64_t until,
                   std::vector<double>& lat);
/// Scenario 1's raw contender that waits for each reply as deadbolt's blocking connection does.
int cycle_polled(const Args& a);
/// The same against etcd (--etcd) with no library logic: deadbolt's two Txns per cycle; with
/// --statements 1, also the watch deadbolt keeps on a holding's key (cycle_etcd.cpp).
int cycle_raw_etcd(const Args& a);
/// The same against ZooKeeper (--zk) through its C client with no library logic: one
/// ephemeral sequential create and its delete per cycle. With --statements 1, the requests
/// deadbolt's Mutex sends instead (create and list, watch, delete).
int cycle_raw_zk(const Args& a);
/// The same against PostgreSQL (--url) through libpq with no library logic:
/// pg_try_advisory_lock and pg_advisory_unlock, one round trip each, a session per thread.
int cycle_raw_pg(const Args& a);
/// The same against MariaDB (--url mysql://user:pw@host:port/db) through Connector/C:
/// GET_LOCK(name, 0) and RELEASE_LOCK, a session per thread. With --statements 1 both send
/// deadbolt's statements for a fenced Mutex instead (cycle_sql.cpp).
int cycle_raw_my(const Args& a);
/// The same against memcached (--url memcached://ip:port) with no library logic: the meta
/// add of a token with a TTL and a delete, a connection per thread. With --statements 1,
/// deadbolt's commands for a Mutex instead (the add, the CAS read and the fence drawn, then a
/// delete by that CAS).
int cycle_raw_mc(const Args& a);
/// The same on the asynchronous API: --threads T loops in flight from one thread.
int cycle_async(const Args& a);
int cycle_loop_blocking(const Args& a);
/// 3 and 6: one of several processes contending for one key; the critical section is a
/// read-modify-write of a counter. Prints every acquisition's [invoked, ok, released] (ns).
/// raw busy-retries the acquire script: the limit of a lock that only polls.
/// deadbolt --primitive: mutex; fair (FairMutex); rw (RWLock: process ids divisible by 4
/// write, the others read the counter twice and count a change as a violation); sem4
/// (Semaphore of 4: INCR/DECR an occupancy key, a fifth holder is a violation); reentrant
/// (ReentrantMutex taken twice); multi (MultiLock of the key and a second name); leader
/// (campaign, then resign).
int contend(const Args& a);
/// 4: --clients N clients wait for a key someone else holds, until the deadline.
int wait(const Args& a);
/// 5: one client holds --leases L auto-renewed leases (--ttl-ms) until the deadline.
int renew(const Args& a);

}  // namespace deadbolt::bench
