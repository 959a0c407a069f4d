#include "common.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#ifdef DEADBOLT_BENCH_METRICS
#include "deadbolt/metrics.hpp"
#endif

namespace deadbolt::bench {

Args parse(int argc, char** argv) {
    Args a;
    if (argc > 1) a.scenario = argv[1];
    for (int i = 2; i + 1 < argc; i += 2) {
        std::string k = argv[i], v = argv[i + 1];
        if (k == "--contender")
            a.contender = v;
        else if (k == "--port")
            a.port = std::stoi(v);
        else if (k == "--ports")
            a.ports = v;
        else if (k == "--query")
            a.query = v;
        else if (k == "--etcd")
            a.etcd = v;
        else if (k == "--zk")
            a.zk = v;
        else if (k == "--url")
            a.url = v;
        else if (k == "--cluster")
            a.cluster = v == "1";
        else if (k == "--threads")
            a.threads = std::stoi(v);
        else if (k == "--id")
            a.id = std::stoi(v);
        else if (k == "--clients")
            a.clients = std::stoi(v);
        else if (k == "--leases")
            a.leases = std::stoi(v);
        else if (k == "--ttl-ms")
            a.ttl_ms = std::stoi(v);
        else if (k == "--seconds")
            a.seconds = std::stod(v);
        else if (k == "--until-ns")
            a.until_ns = std::stoll(v);
        else if (k == "--start-ns")
            a.start_ns = std::stoll(v);
        else if (k == "--key")
            a.key = v;
        else if (k == "--primitive")
            a.primitive = v;
        else if (k == "--connections")
            a.connections = std::stoi(v);
        else if (k == "--loop-spin-us")
            a.loop_spin_us = std::stoi(v);
        else if (k == "--metrics")
            a.metrics = v == "1";
        else if (k == "--statements")
            a.statements = v == "1";
        else if (k == "--spend-us")
            a.spend_us = std::stod(v);
        else if (k == "--leave-out")
            a.leave_out = v;
        else
            throw std::invalid_argument("unknown option " + k);
    }
    if (a.spend_us > 0) {
        // Only the raw SQL and memcached contenders sending deadbolt's statements burn it.
        const bool burns = a.contender == "raw-pg" || a.contender == "raw-my" ||
                           (a.contender == "raw-mc" && a.statements);
        if (!burns)
            throw std::invalid_argument(
                "--spend-us: only raw-pg, raw-my and raw-mc --statements 1 spend it");
        spend_user_cpu(a.spend_us);  // calibrated now, not in a measured cycle
    }
    if (a.until_ns == 0) a.until_ns = now_ns() + static_cast<std::int64_t>(a.seconds * 1e9);
    return a;
}

namespace {
#ifdef DEADBOLT_BENCH_METRICS
const metrics::Registry* observing = nullptr;  // set by --metrics 1
#endif

// The grants the metrics observer counted (-1 without it): proof that it was on.
double observed_grants() {
    double n = -1;
#ifdef DEADBOLT_BENCH_METRICS
    if (observing == nullptr) return n;
    n = 0;
    observing->collect([&](const metrics::Sample& s) {
        if (s.family == "deadbolt_acquire_seconds" && s.labels.back().second == "granted")
            n += static_cast<double>(s.count);
    });
#endif
    return n;
}

}  // namespace

void observe(const Args& a, ClientOptions& opts) {
    if (!a.metrics) return;
#ifdef DEADBOLT_BENCH_METRICS
    static const metrics::Registry registry;
    opts.observer = registry.observer("redis");
    observing = &registry;
#else
    (void)opts;
    throw std::invalid_argument("--metrics: this bench was built without deadbolt::metrics");
#endif
}

std::int64_t now_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return std::int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

double cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double user_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec) + double(u.ru_utime.tv_usec) / 1e6;
}

namespace {

// One step of spend_user_cpu's loop, which the compiler may not drop or fold.
inline void step(std::uint64_t& x) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    asm volatile("" : "+r"(x));
}

// Steps per microsecond of this machine's CPU, the best of a few 20 ms tries on the thread's
// CPU clock (a system call, so it is read only around whole tries).
double steps_per_us() {
    static const double rate = [] {
        auto thread_us = [] {
            timespec t{};
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
            return double(t.tv_sec) * 1e6 + double(t.tv_nsec) / 1e3;
        };
        constexpr std::uint64_t kSteps = 20'000'000;
        double best = 0;
        for (int i = 0; i < 5; ++i) {
            std::uint64_t x = 1;
            const double t0 = thread_us();
            for (std::uint64_t n = 0; n < kSteps; ++n) step(x);
            best = std::max(best, double(kSteps) / (thread_us() - t0));
        }
        return best;
    }();
    return rate;
}

}  // namespace

void spend_user_cpu(double us) {
    if (us <= 0) return;
    // Counted in steps, not read off a clock: no system call, and time spent descheduled is not
    // taken for work done.
    const auto steps = static_cast<std::uint64_t>(us * steps_per_us());
    std::uint64_t x = 1;
    for (std::uint64_t n = 0; n < steps; ++n) step(x);
}

Raw::Raw(int port) : c_(redisConnect("127.0.0.1", port)) {
    if (!c_ || c_->err) throw std::runtime_error("bench: cannot connect to redis");
}

Raw::~Raw() {
    redisFree(c_);
}

long long Raw::cmd(const std::vector<std::string>& argv) {
    std::vector<const char*> p;
    std::vector<size_t> l;
    for (const auto& s : argv) p.push_back(s.data()), l.push_back(s.size());
    auto* r = static_cast<redisReply*>(redisCommandArgv(c_, int(argv.size()), p.data(), l.data()));
    if (!r) throw std::runtime_error("bench: connection lost");
    const redisReply* v = r->type == REDIS_REPLY_ARRAY && r->elements ? r->element[0] : r;
    long long out = v->type == REDIS_REPLY_INTEGER  ? v->integer
                    : v->type == REDIS_REPLY_STRING ? std::atoll(v->str)
                    : v->type == REDIS_REPLY_STATUS ? 1
                                                    : 0;
    freeReplyObject(r);
    return out;
}

double percentile(std::vector<double>& v, double p) {
    if (v.empty()) return 0;
    auto i = std::min(v.size() - 1, static_cast<std::size_t>(p * double(v.size())));
    std::nth_element(v.begin(), v.begin() + static_cast<long>(i), v.end());
    return v[i];
}

void print_cycles(const std::vector<std::vector<double>>& lat, std::int64_t start_ns, double cpu0,
                  double user0) {
    double elapsed = double(now_ns() - start_ns) / 1e9;
    std::vector<double> all;
    for (const auto& v : lat) all.insert(all.end(), v.begin(), v.end());
    const double cpu = cpu_seconds() - cpu0, user = user_seconds() - user0;
    std::printf(
        "{\"cycles\":%zu,\"cycles_per_s\":%.1f,\"p50_us\":%.2f,\"p99_us\":%.2f,\"cpu_s\":%.3f,"
        "\"user_s\":%.3f,\"observed_grants\":%.0f}\n",
        all.size(), double(all.size()) / elapsed, percentile(all, 0.5), percentile(all, 0.99), cpu,
        std::min(user, cpu), observed_grants());
}

void run_cycles(const Args& a, const std::function<void(int t, std::vector<double>& lat)>& loop) {
    std::vector<std::vector<double>> lat(a.threads);
    auto start = now_ns();
    double cpu0 = cpu_seconds(), user0 = user_seconds();
    std::vector<std::thread> ts;
    ts.reserve(a.threads);
    // A loop's failure (a server that is not there) is main's to report, not std::terminate's.
    std::mutex m;
    std::exception_ptr failed;
    for (int t = 0; t < a.threads; ++t)
        ts.emplace_back([&, t] {
            try {
                loop(t, lat[t]);
            } catch (...) {
                std::lock_guard lock(m);
                if (!failed) failed = std::current_exception();
            }
        });
    for (auto& t : ts) t.join();
    if (failed) std::rethrow_exception(failed);
    print_cycles(lat, start, cpu0, user0);
}

std::string client_url(const Args& a) {
    if (!a.etcd.empty()) return "etcd://" + a.etcd;
    if (!a.zk.empty()) return "zk://" + a.zk;
    if (!a.url.empty()) return a.url;
    if (a.ports.empty()) return "redis://127.0.0.1:" + std::to_string(a.port);
    std::string url = a.cluster ? "redis-cluster://" : "redlock://", sep;
    for (std::size_t at = 0; at != std::string::npos;) {
        auto comma = a.ports.find(',', at);
        url += sep + "127.0.0.1:" + a.ports.substr(at, comma - at);
        sep = ",";
        at = comma == std::string::npos ? comma : comma + 1;
    }
    if (!a.query.empty()) url += "?" + a.query;
    return url;
}

}  // namespace deadbolt::bench
