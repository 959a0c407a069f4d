#include "nemesis.hpp"

#include "locks.hpp"

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <thread>

namespace deadbolt::torture {
namespace {

using std::chrono::milliseconds;

void sleep_for(milliseconds d) {
    std::this_thread::sleep_for(d);
}

int pick(const std::vector<int>& v, std::mt19937& rng) {
    return v[rng() % v.size()];
}

}  // namespace

const std::vector<std::string>& nemesis_kinds() {
    static const std::vector<std::string> k = {"none",
                                               "pause",
                                               "kill",
                                               "stall",
                                               "cut",
                                               "restart",
                                               "restart-aof",
                                               "restart-delayed",
                                               "failover",
                                               "clock-jump",
                                               "clock-rate",
                                               "clock-skew",
                                               "sentinel-failover",
                                               "cluster-failover",
                                               "member-restart",
                                               "leader-kill"};
    return k;
}

const std::vector<std::string>& etcd_nemeses() {
    // etcd's and ZooKeeper's servers keep their own clocks (no shim), and their state is a
    // quorum's, not a primary's.
    static const std::vector<std::string> k = {"pause", "kill",           "stall",
                                               "cut",   "member-restart", "leader-kill"};
    return k;
}

std::vector<std::string> nemeses_for(const std::string& lock) {
    if (uses_sentinel(lock)) return {"pause", "kill", "clock-skew", "sentinel-failover"};
    if (uses_cluster(lock)) return {"pause", "kill", "cluster-failover"};
    if (uses_consensus(lock)) return etcd_nemeses();
    // A database or memcached: one server without the clock shim; a restart ends every
    // session (memcached: forgets every item).
    if (!uses_database(lock).empty()) return {"pause", "kill", "stall", "cut", "restart"};
    auto all = nemesis_kinds();
    std::erase(all, std::string("member-restart"));
    std::erase(all, std::string("leader-kill"));
    std::erase(all, std::string("sentinel-failover"));
    std::erase(all, std::string("cluster-failover"));
    if (lock_nodes(lock) > 1) std::erase(all, std::string("failover"));  // no replica
    return all;
}

bool nemesis_fits(const std::string& lock, const std::string& nemesis) {
    auto fit = nemeses_for(lock);
    return nemesis == "none" || std::find(fit.begin(), fit.end(), nemesis) != fit.end() ||
           (nemesis == "mixed" && !uses_sentinel(lock) && !uses_cluster(lock) &&
            uses_database(lock).empty());
}

bool known_nemesis(const std::string& kind) {
    auto& k = nemesis_kinds();
    return kind == "mixed" || std::find(k.begin(), k.end(), kind) != k.end();
}

bool needs_aof(const std::string& kind) {
    return kind == "restart-aof" || kind == "mixed";
}

bool needs_standby(const std::string& kind) {
    return kind == "failover" || kind == "mixed";
}

Promise promised(const std::string& lock, const std::string& nemesis) {
    if (!promises_safety(lock)) return {};
    bool state_survives = nemesis != "restart" && nemesis != "failover" &&
                          nemesis != "sentinel-failover" && nemesis != "cluster-failover" &&
                          nemesis != "clock-jump" && nemesis != "clock-rate" &&
                          nemesis != "clock-skew" && (nemesis != "mixed" || uses_consensus(lock));
    // A database frees a session's locks the moment its connection ends: a killed holder's
    // lock, or a cut one's, is handed on at once, before a live holder hears of it (at its
    // next statement). Fences keep such a holder's writes out. PostgreSQL's semaphores and
    // reentrant locks are rows that outlive the connection until their TTL.
    bool row = kind_parts(lock).primitive == "deadbolt-reentrant" || capacity(lock) > 1;
    // memcached keeps an item until its TTL, whoever hangs up.
    bool session_locks = !uses_database(lock).empty() && uses_database(lock) != "memcached";
    bool freed_with_connection = session_locks && !row && (nemesis == "kill" || nemesis == "cut");
    return {state_survives && !freed_with_connection, hands_out_fences(lock), capacity(lock)};
}

std::string inject(const std::string& kind, Targets& t) {
    if (kind == "mixed" && t.side.consensus()) {
        // None of a consensus engine's nemeses loses the lock's state.
        const auto& pool = etcd_nemeses();
        return inject(pool[t.rng() % pool.size()], t);
    }
    if (kind == "mixed") {
        const auto& k = nemesis_kinds();
        // Everything but "none" and "restart": the mixed run's servers keep an AOF.
        std::vector<std::string> pool;
        for (const auto& n : k)
            if (n != "none" && n != "restart" && n != "sentinel-failover" &&
                n != "cluster-failover" && n != "member-restart" && n != "leader-kill" &&
                (n != "failover" || t.side.has_standby()))
                pool.push_back(n);
        return inject(pool[t.rng() % pool.size()], t);
    }
    auto ttl = t.ttl;
    // On Redlock a restart hits one node, picked at random.
    std::size_t node = t.rng() % t.side.nodes();
    if (kind == "restart-aof" || kind == "restart") {
        // At once (a supervisor restarting it): a holder may still be inside its section.
        t.side.restart_primary(std::chrono::milliseconds(0), node);
        return kind;
    }
    if (kind == "restart-delayed") {
        // Down for longer than any lease (Redlock's delayed restart): whatever it held has
        // expired everywhere else before it comes back empty.
        t.side.restart_primary(ttl * 2, node);
        return kind;
    }
    if (kind == "sentinel-failover") {
        // The primary stops as if it crashed; the sentinels promote its replica; it comes back
        // 2 TTLs later as a replica.
        return t.side.sentinel_failover(ttl * 2) ? kind : "";
    }
    if (kind == "cluster-failover") {
        // The master of the lock's slot stops as if it crashed; the cluster promotes its
        // replica; it comes back 2 TTLs later as that one's replica.
        return t.side.cluster_failover(ttl * 2) ? kind : "";
    }
    if (kind == "member-restart" || kind == "leader-kill") {
        // etcd, ZooKeeper: one member (the leader, or any) dies as a crash would and comes back
        // with its data 2 TTLs later; the other two keep a majority.
        return t.side.restart_member(kind == "leader-kill", node, ttl * 2) ? kind : "";
    }
    if (kind == "failover") {
        t.side.failover(ttl / 2, ttl * 2);
        return kind;
    }
    if (kind == "clock-jump") {
        t.side.clock().jump(ttl * 2);  // every lock on the server expires at once
        return kind;
    }
    if (kind == "clock-rate") {
        t.side.clock().set_rate(1.5);  // expiries come a third early
        sleep_for(ttl * 3);
        t.side.clock().set_rate(1.0);
        return kind;
    }
    // A holder-side fault needs a holder: wait up to a TTL for one (holdings are short, and
    // on a slow engine most of the time goes to acquiring).
    auto holders = t.holders();
    for (auto until = std::chrono::steady_clock::now() + ttl;
         holders.empty() && std::chrono::steady_clock::now() < until; holders = t.holders())
        sleep_for(milliseconds(1));
    if (holders.empty()) return "";
    int victim = pick(holders, t.rng);
    if (kind == "pause") {
        kill(t.pids[victim], SIGSTOP);  // like a GC pause or a swapped-out VM, past the TTL
        sleep_for(ttl * 5 / 2);
        kill(t.pids[victim], SIGCONT);
    } else if (kind == "kill") {
        kill(t.pids[victim], SIGKILL);  // a holder that dies without releasing
        waitpid(t.pids[victim], nullptr, 0);
        t.pids[victim] = t.respawn(victim);  // appends to the same history
    } else if (kind == "stall") {
        // The holder's traffic held back one way or both, past its TTL, then delivered late.
        unsigned dir = 1 + t.rng() % 3;
        for (auto* p : t.side.proxies_of(victim)) {
            p->stall_requests(dir & 1);
            p->stall_replies(dir & 2);
        }
        sleep_for(ttl * 5 / 2);
        for (auto* p : t.side.proxies_of(victim)) {
            p->stall_requests(false);
            p->stall_replies(false);
        }
    } else if (kind == "clock-skew") {
        // The holder's own clock runs at half speed while it is paused for 1.5 TTLs: with a
        // true clock it would know its lease ran out; with this one it believes it holds on.
        auto& clock = *t.clocks[victim];
        clock.set_rate(0.5);
        kill(t.pids[victim], SIGSTOP);
        sleep_for(ttl * 3 / 2);
        kill(t.pids[victim], SIGCONT);
        sleep_for(ttl);
        clock.set_rate(1.0);
    } else if (kind == "cut") {
        for (auto* p : t.side.proxies_of(victim)) p->cut_all();  // dropped mid-flight
    }
    return kind;
}

}  // namespace deadbolt::torture
