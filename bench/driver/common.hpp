// What every scenario of the bench driver shares: arguments, the raw hiredis connection that
// stands for "the physical limit", percentiles, CPU time, and JSON output.
#pragma once

#include <hiredis/hiredis.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "deadbolt/client.hpp"

namespace deadbolt::bench {

using Clock = std::chrono::steady_clock;

struct Args {
    std::string scenario, contender = "deadbolt";  // contender: deadbolt | raw
    int port = 6379, threads = 1, id = 0, clients = 1, leases = 1000, ttl_ms = 30000;
    std::string ports;     // "p1,p2,p3": Redlock over these nodes instead of --port
    std::string query;     // appended to the Redlock URL, e.g. "fencing=0"
    std::string etcd;      // "h:p,h:p,...": the lock on these etcd members (etcd://)
    std::string zk;        // "h:p,h:p,...": the lock on these ZooKeeper servers (zk://)
    std::string url;       // any deadbolt URL (postgresql://, mysql://): overrides the rest
    bool cluster = false;  // --ports are a Redis Cluster's masters (redis-cluster://)
    double seconds = 3;
    std::int64_t start_ns = 0, until_ns = 0;  // CLOCK_MONOTONIC span shared by a run's processes
    std::string key = "bench";
    std::string primitive = "mutex";  // contend: mutex | fair | rw | sem4 (deadbolt only)
    int loop_spin_us = -1;            // ClientOptions::loop_spin; -1 = its default
    int connections = 0;              // RedisOptions::command_connections; 0 = its default
    bool statements = false;  // raw-pg/-my/-zk/-mc/-etcd: deadbolt's requests, not the bare lock
    std::string leave_out;    // raw-zk --statements 1: "list" or "watch" is not sent
    bool metrics = false;     // --metrics 1: a deadbolt::metrics observer counts it all
    double spend_us = 0;      // raw-mc/-pg/-my: user CPU burnt per cycle, as a library's
};
Args parse(int argc, char** argv);

/// deadbolt's URL for the servers a names: redis:// on --port, or redlock:// (redis-cluster://
/// with --cluster) over --ports, with --query appended; etcd:// over --etcd; zk:// over --zk.
std::string client_url(const Args& a);

/// With --metrics 1, sets opts.observer to a deadbolt::metrics::Registry's (one per process,
/// never scraped: what it costs to count); throws when the bench was built without it.
void observe(const Args& a, ClientOptions& opts);

/// CLOCK_MONOTONIC in ns: the clock every contender (C++, Python, Node) reports on.
std::int64_t now_ns();
/// User + system CPU seconds of this process so far.
double cpu_seconds();
/// User CPU seconds of this process so far (the kernel's share is cpu_seconds() minus this).
double user_seconds();
/// Burns us microseconds of this thread's CPU in user space: a raw contender given a library's
/// own CPU per cycle (--spend-us), to see what that costs beyond itself.
void spend_user_cpu(double us);

/// A plain hiredis connection; throws if it cannot connect.
class Raw {
  public:
    explicit Raw(int port);
    ~Raw();
    Raw(const Raw&) = delete;
    Raw& operator=(const Raw&) = delete;
    /// Sends one command; returns its integer, or the string parsed as one, or 1 for OK;
    /// for an array reply, its first element's. Throws on a connection error.
    long long cmd(const std::vector<std::string>& argv);

  private:
    redisContext* c_;
};

/// The p-th percentile (0..1) of v (reorders v).
double percentile(std::vector<double>& v, double p);

/// Prints scenario 1-2's JSON: every loop's cycle latencies (µs), from start_ns and the CPU
/// times cpu0 (user + system) and user0 then.
void print_cycles(const std::vector<std::vector<double>>& lat, std::int64_t start_ns, double cpu0,
                  double user0);

/// Scenario 1-2 on a.threads threads: loop(t, lat) runs thread t's cycles until a.until_ns,
/// each one's latency (µs) into lat; then prints their JSON (print_cycles).
void run_cycles(const Args& a, const std::function<void(int t, std::vector<double>& lat)>& loop);

}  // namespace deadbolt::bench
