// The backends every conformance suite runs against: a URL to connect to, and a way to take
// a holding away behind its holder's back (to prove loss is reported). The next engines add a
// backend here, not tests.
#pragma once

#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#ifdef DEADBOLT_TEST_ETCD
#include "etcd_cluster.hpp"
#endif
#ifdef DEADBOLT_TEST_ZK
#include "zk_ensemble.hpp"
#endif
#ifdef DEADBOLT_TEST_PG
#include "pg_server.hpp"
#endif
#ifdef DEADBOLT_TEST_MY
#include "mariadb_server.hpp"
#endif
#ifdef DEADBOLT_TEST_MC
#include "backends/memcached/keys.hpp"
#include "memcached_server.hpp"
#endif
#ifdef DEADBOLT_TEST_MEMORY
#include "deadbolt/memory.hpp"
#endif
#include "redis_cluster.hpp"
#include "redis_server.hpp"
#include "redlock_nodes.hpp"
#include "sentinel_group.hpp"

namespace deadbolt::conformance {

// Each backend says what it keeps: kQueues (a FIFO queue: FairMutex), kCounts (counts
// that must add up: Semaphore, CountDownLatch), kExpiresAlone (a holding that is not
// renewed ends by itself), kRates (a token bucket refilled by the server's clock), kShares (a
// shared mode: RWLock), kReenters (an owner's holds counted across clients: ReentrantMutex)
// kElects (a leader whose changes wake observers: LeaderElection) and kFencedData (values
// that take writes from the newest fence only: Client::fenced_set). A
// backend that cannot keep one refuses it at once with the reason, and the suites check that
// instead. kShortTtl is the shortest TTL a test may ask for (an engine may refuse shorter
// ones).

/// One Redis server (redis://).
struct OneServer {
    static constexpr const char* kName = "OneServer";
    static constexpr bool kQueues = true, kCounts = true, kExpiresAlone = true;
    static constexpr bool kRates = true;
    static constexpr bool kShares = true, kReenters = true, kElects = true;
    static constexpr bool kFencedData = true;
    static constexpr std::chrono::milliseconds kShortTtl{300};
    test::RedisServer server;
    std::string url() const { return server.url(); }
    void take_away(const std::string& key) { server.raw().cmd({"DEL", key}); }
};

/// A primary with two replicas behind three sentinels (redis-sentinel://).
struct Sentinel {
    static constexpr const char* kName = "Sentinel";
    static constexpr bool kQueues = true, kCounts = true, kExpiresAlone = true;
    static constexpr bool kRates = true;
    static constexpr bool kShares = true, kReenters = true, kElects = true;
    static constexpr bool kFencedData = true;
    static constexpr std::chrono::milliseconds kShortTtl{300};
    test::SentinelGroup group;
    std::string url() const { return group.url(); }
    void take_away(const std::string& key) { group.primary.raw().cmd({"DEL", key}); }
};

/// Three masters with a replica each (redis-cluster://).
struct Cluster {
    static constexpr const char* kName = "Cluster";
    static constexpr bool kQueues = true, kCounts = true, kExpiresAlone = true;
    static constexpr bool kRates = true;
    static constexpr bool kShares = true, kReenters = true, kElects = true;
    static constexpr bool kFencedData = true;
    static constexpr std::chrono::milliseconds kShortTtl{300};
    test::RedisCluster cluster;
    std::string url() const { return cluster.url(); }
    void take_away(const std::string& key) {
        cluster.node(cluster.master_of(key)).raw().cmd({"DEL", key});
    }
};

/// Redlock over three independent masters (redlock://).
struct Redlock {
    static constexpr const char* kName = "Redlock";
    static constexpr bool kQueues = false, kCounts = false, kExpiresAlone = true;
    static constexpr bool kRates = false;
    static constexpr bool kShares = true, kReenters = true, kElects = true;
    static constexpr bool kFencedData = true;
    static constexpr std::chrono::milliseconds kShortTtl{300};
    test::RedlockNodes nodes{3};
    std::string url() const { return nodes.url(); }
    void take_away(const std::string& key) {
        for (auto& n : nodes.nodes) n->raw().cmd({"DEL", key});
    }
};

#ifdef DEADBOLT_TEST_ETCD
/// A three-member etcd cluster (etcd://); leases are whole seconds, 2 s at the least.
struct Etcd {
    static constexpr const char* kName = "Etcd";
    static constexpr bool kQueues = true, kCounts = true, kExpiresAlone = true;
    static constexpr bool kRates = false;
    static constexpr bool kShares = true, kReenters = true, kElects = true;
    static constexpr bool kFencedData = true;
    static constexpr std::chrono::milliseconds kShortTtl{2000};
    test::EtcdCluster cluster{3};
    std::string url() const { return "etcd://" + cluster.endpoints(); }
    void take_away(const std::string& name) { cluster.etcdctl({"del", "--prefix", name + "/"}); }
};
#endif

#ifdef DEADBOLT_TEST_ZK
/// A three-server ZooKeeper ensemble (zk://) with a 500 ms tick: sessions of up to 10 s,
/// and a lock lives as long as its session (Mutex, FairMutex and RWLock so far).
struct Zk {
    static constexpr const char* kName = "Zk";
    static constexpr bool kQueues = true, kCounts = true, kExpiresAlone = false;
    static constexpr bool kRates = false;
    static constexpr bool kShares = true, kReenters = true, kElects = true;
    static constexpr bool kFencedData = false;
    static constexpr std::chrono::milliseconds kShortTtl{1000};
    test::ZkEnsemble ensemble{3};
    // Its suites' clients wait up to 30 s for a session, not the default 2: under the
    // sanitizers' load a member may lose its leader for a moment, and the suites are not about
    // how fast a session comes. (Not in url(): the CLI suite adds its own query to it.) 10 s
    // was not enough under the README command's -j4 on 2 cores: "took a TCP connection but
    // made no session" from all three members (CI of stop 58, twice in four full runs).
    static constexpr std::chrono::milliseconds kSessionWithin{30000};
    // And up to 10 s for a reply, for the same reason: a write sent while the ensemble elects
    // a leader waits for the election (a 2 s timeout failed one such write under the
    // sanitizers in CI).
    static constexpr std::chrono::milliseconds kAnswerWithin{10000};
    std::string url() const { return ensemble.url(); }
    void take_away(const std::string& name) {
        ensemble.kazoo(R"(
import sys
from kazoo.client import KazooClient
zk = KazooClient(hosts=sys.argv[1]); zk.start(); zk.delete(sys.argv[2], recursive=True); zk.stop()
)",
                       {"/" + name});
    }
};
#endif

#ifdef DEADBOLT_TEST_PG
/// One PostgreSQL server (postgresql://): session advisory locks, whose TTL is the session's
/// idle timeout.
struct Pg {
    static constexpr const char* kName = "Pg";
    static constexpr bool kQueues = true, kCounts = true, kExpiresAlone = true;
    static constexpr bool kRates = true;
    static constexpr bool kShares = true, kReenters = true, kElects = true;
    static constexpr bool kFencedData = true;
    static constexpr std::chrono::milliseconds kShortTtl{300};
    test::PgServer server;
    std::string url() const { return server.url(); }
    // Ends the holder's session from the server's side, as an administrator would.
    void take_away(const std::string& name) {
        server.psql("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE " + lock_of(name) +
                    " AND granted");
    }
    // How many sessions wait in the server's queue for the lock: a waiter is told to wait
    // (on_wait) before its waiting statement reaches the server.
    int waiting(const std::string& name) {
        std::string n;
        server.psql("SELECT count(*) FROM pg_locks WHERE " + lock_of(name) + " AND NOT granted",
                    &n);
        return std::atoi(n.c_str());
    }

  private:
    static std::string lock_of(const std::string& name) {
        std::string quoted;
        for (char c : name) quoted += c == '\'' ? std::string("''") : std::string(1, c);
        return "locktype = 'advisory' AND objsubid = 1 AND (classid::bigint << 32 | "
               "objid::bigint) = deadbolt.key('" +
               quoted + "')";
    }
};
#endif

#ifdef DEADBOLT_TEST_MY
/// One MariaDB server (mysql://): GET_LOCK, whose TTL is the session's wait_timeout in whole
/// seconds.
struct My {
    static constexpr const char* kName = "My";
    static constexpr bool kQueues = true, kCounts = false, kExpiresAlone = true;
    static constexpr bool kRates = true;
    static constexpr bool kShares = false, kReenters = false, kElects = false;
    static constexpr bool kFencedData = true;
    static constexpr std::chrono::milliseconds kShortTtl{1000};
    test::MariaDbServer server;
    std::string url() const { return server.url(); }
    // Ends the holder's connection from the server's side, as an administrator would.
    void take_away(const std::string& name) {
        std::string id;
        server.sql("SELECT IS_USED_LOCK(" + lock_of(name) + ")", &id);
        if (!id.empty() && id != "NULL\n") server.sql("KILL CONNECTION " + id);
    }
    // How many sessions wait in GET_LOCK for the lock: a waiter is told to wait (on_wait)
    // before its waiting statement reaches the server.
    int waiting(const std::string& name) {
        std::string n;
        server.sql(
            "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE STATE = 'User "
            "lock' AND INFO LIKE CONCAT('%GET_LOCK(''', " +
                lock_of(name) + ", '''%')",
            &n);
        return std::atoi(n.c_str());
    }

  private:
    // The name deadbolt gives GET_LOCK for name (README, "Databases"), as SQL.
    static std::string lock_of(const std::string& name) {
        std::string hex;
        for (unsigned char c : name) {
            static constexpr char kHex[] = "0123456789abcdef";
            hex += kHex[c >> 4];
            hex += kHex[c & 15];
        }
        std::string n = "X'" + hex + "'";
        return "IF(" + n + " REGEXP BINARY '^[a-z0-9._:/@#-]{1,64}$' AND " + n +
               " NOT LIKE 'deadbolt:%', " + n + ", CONCAT('deadbolt:', LEFT(SHA2(" + n +
               ", 256), 55)))";
    }
};
#endif

#ifdef DEADBOLT_TEST_MC
/// One memcached server (memcached://, run with -M): locks are items added with a TTL in
/// whole seconds, waiters look again with backoff.
struct Mc {
    static constexpr const char* kName = "Mc";
    static constexpr bool kQueues = false, kCounts = true, kExpiresAlone = true;
    static constexpr bool kRates = true;
    static constexpr bool kShares = false, kReenters = true, kElects = false;
    static constexpr bool kFencedData = false;
    static constexpr std::chrono::milliseconds kShortTtl{2000};
    test::McServer server;
    std::string url() const { return server.url(); }
    // Deletes the lock's item, as an operator would (README, "Memcached": its key).
    void take_away(const std::string& name) { server.raw("md " + key(name) + "\r\n"); }
    static std::string key(const std::string& name) {
        return detail::mc_keys("", name).lock();  // README, "Memcached": names as keys
    }
};

/// Three memcached servers deciding by majority (memcached://a,b,c): Mutex and MultiLock
/// only; what counts on one server is refused.
struct McMajority {
    static constexpr const char* kName = "McMajority";
    static constexpr bool kQueues = false, kCounts = false, kExpiresAlone = true;
    static constexpr bool kRates = false;
    static constexpr bool kShares = false, kReenters = false, kElects = false;
    static constexpr bool kFencedData = false;
    static constexpr std::chrono::milliseconds kShortTtl{2000};
    test::McServer a, b, c;
    std::string url() const {
        return "memcached://" + a.address() + "," + b.address() + "," + c.address();
    }
    void take_away(const std::string& name) {
        for (auto* s : {&a, &b, &c}) s->raw("md " + Mc::key(name) + "\r\n");
    }
};
#endif

#ifdef DEADBOLT_TEST_FILE
/// One machine's lock directory (file://): the kernel's locks, held while the holder's process
/// lives, so nothing ends by itself and no latch is kept.
struct File {
    static constexpr const char* kName = "File";
    static constexpr bool kQueues = false, kCounts = true, kExpiresAlone = false;
    static constexpr bool kLatches = false, kServerless = true;
    static constexpr bool kRates = false;
    static constexpr bool kShares = true, kReenters = true, kElects = false;
    static constexpr bool kFencedData = false;
    static constexpr std::chrono::milliseconds kShortTtl{1000};
    std::string dir = [] {
        char tmpl[] = "/tmp/deadbolt-file-XXXXXX";
        return std::string(::mkdtemp(tmpl));
    }();
    File() = default;
    File(const File&) = delete;
    File& operator=(const File&) = delete;
    ~File() {
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);  // the lock files go with the suite
    }
    std::string url() const { return "file://" + dir; }
    // Puts a new lock file (with the same fence) in the holder's file's place, as
    // force-unlock does (README, "file://"): the name's file is "<name>.lock".
    void take_away(const std::string& name) {
        const std::string path = dir + "/" + name + ".lock";
        std::string text;
        if (std::FILE* f = std::fopen(path.c_str(), "r")) {
            char buf[256] = {};
            text.assign(buf, std::fread(buf, 1, sizeof buf - 1, f));
            std::fclose(f);
        }
        const std::string fresh = path + ".new";
        if (std::FILE* f = std::fopen(fresh.c_str(), "w")) {
            std::fputs((text.substr(0, text.find(' ')) + " \n").c_str(), f);
            std::fclose(f);
        }
        std::rename(fresh.c_str(), path.c_str());
    }
};
#endif

#ifdef DEADBOLT_TEST_MEMORY
/// A memory space (memory://NAME): the engine inside the process that users' tests use, with
/// every primitive; a holding is taken away by the fault a test drives (memory::Space::lose).
struct Memory {
    static constexpr const char* kName = "Memory";
    static constexpr bool kQueues = true, kCounts = true, kExpiresAlone = true;
    static constexpr bool kRates = true;
    static constexpr bool kShares = true, kReenters = true, kElects = true;
    static constexpr bool kFencedData = true, kServerless = true;
    static constexpr std::chrono::milliseconds kShortTtl{300};
    memory::Space space{"conformance"};
    std::string url() const { return "memory://conformance"; }
    void take_away(const std::string& name) { space.lose(name); }
};
#endif

/// Whether B runs without a server (file://): no address to connect to or refuse.
template <class B>
constexpr bool serverless() {
    if constexpr (requires { B::kServerless; })
        return B::kServerless;
    else
        return false;
}

/// Whether B keeps CountDownLatch (kCounts unless it says otherwise).
template <class B>
constexpr bool latches() {
    if constexpr (requires { B::kLatches; })
        return B::kLatches;
    else
        return B::kCounts;
}

/// One backend per process, shared by a suite's tests (each uses names of its own).
template <class B>
B& shared() {
    static B b;
    return b;
}

/// Names gtest gives each backend's instantiation ("MutexContract/Cluster.Excludes...").
struct BackendName {
    template <class B>
    static std::string GetName(int) {
        return B::kName;
    }
};

}  // namespace deadbolt::conformance
