// mutex_cycle: acquire+release cycles per second and latency, deadbolt vs. the same two
// scripts sent over raw hiredis (the physical limit of this command mix).
//   mutex_cycle --port P --mode raw|deadbolt --threads T --seconds S
// Prints one JSON object. Each thread cycles on its own key.
#include <hiredis/hiredis.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "deadbolt/deadbolt.hpp"
#include "redis/scripts.hpp"

using Clock = std::chrono::steady_clock;

namespace {

struct Args {
    int port = 6379, threads = 1;
    double seconds = 3;
    std::string mode = "deadbolt";
};

Args parse(int argc, char** argv) {
    Args a;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string k = argv[i], v = argv[i + 1];
        if (k == "--port")
            a.port = std::atoi(v.c_str());
        else if (k == "--threads")
            a.threads = std::atoi(v.c_str());
        else if (k == "--seconds")
            a.seconds = std::atof(v.c_str());
        else if (k == "--mode")
            a.mode = v;
    }
    return a;
}

redisReply* cmd(redisContext* c, const std::vector<std::string>& argv) {
    std::vector<const char*> p;
    std::vector<size_t> l;
    for (auto& s : argv) p.push_back(s.data()), l.push_back(s.size());
    return static_cast<redisReply*>(redisCommandArgv(c, int(argv.size()), p.data(), l.data()));
}

// One raw cycle: the acquire script and the release script, as deadbolt sends them.
void raw_loop(int port, int t, Clock::time_point end, std::vector<double>& lat) {
    redisContext* c = redisConnect("127.0.0.1", port);
    using namespace deadbolt::detail;
    const auto& acq = acquire_script();
    const auto& rel = release_script();
    freeReplyObject(cmd(c, {"SCRIPT", "LOAD", std::string(acq.source)}));
    freeReplyObject(cmd(c, {"SCRIPT", "LOAD", std::string(rel.source)}));
    std::string key = "bench:" + std::to_string(t), fence = "{" + key + "}:fence",
                chan = "{" + key + "}:released", token = "0123456789abcdef0123456789abcdef";
    while (Clock::now() < end) {
        auto t0 = Clock::now();
        freeReplyObject(cmd(c, {"EVALSHA", acq.sha1, "2", key, fence, token, "30000", "90000"}));
        freeReplyObject(cmd(c, {"EVALSHA", rel.sha1, "1", key, token, chan}));
        lat.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
    redisFree(c);
}

void deadbolt_loop(deadbolt::Client& client, int t, Clock::time_point end,
                   std::vector<double>& lat) {
    auto m = client.mutex("bench:" + std::to_string(t));
    while (Clock::now() < end) {
        auto t0 = Clock::now();
        m.lock();
        m.unlock();
        lat.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
}

double pct(std::vector<double>& v, double p) {
    if (v.empty()) return 0;
    std::size_t i = std::min(v.size() - 1, static_cast<std::size_t>(p * double(v.size())));
    std::nth_element(v.begin(), v.begin() + long(i), v.end());
    return v[i];
}

}  // namespace

int main(int argc, char** argv) {
    Args a = parse(argc, argv);
    std::vector<std::vector<double>> lat(a.threads);
    std::optional<deadbolt::Client> client;
    if (a.mode == "deadbolt")
        client.emplace(deadbolt::Client::connect("redis://127.0.0.1:" + std::to_string(a.port)));
    auto start = Clock::now();
    auto end = start + std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(a.seconds));
    std::vector<std::thread> ts;
    for (int t = 0; t < a.threads; ++t)
        ts.emplace_back([&, t] {
            if (a.mode == "raw")
                raw_loop(a.port, t, end, lat[t]);
            else
                deadbolt_loop(*client, t, end, lat[t]);
        });
    for (auto& t : ts) t.join();
    double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    std::vector<double> all;
    for (auto& v : lat) all.insert(all.end(), v.begin(), v.end());
    std::printf(
        "{\"mode\":\"%s\",\"threads\":%d,\"cycles\":%zu,\"cycles_per_s\":%.0f,\"p50_us\":%.1f,"
        "\"p99_us\":%.1f}\n",
        a.mode.c_str(), a.threads, all.size(), double(all.size()) / elapsed, pct(all, 0.5),
        pct(all, 0.99));
    return 0;
}
