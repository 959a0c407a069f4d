// Scenario 1-2 for the asynchronous API: --threads T loops of acquire+release kept in flight
// from this one thread (callbacks chain each loop's next cycle on the client's event loop).
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <semaphore>
#include <stdexcept>

#include "deadbolt/async.hpp"
#include "deadbolt/deadbolt.hpp"
#include "scenarios.hpp"

namespace deadbolt::bench {
namespace {

struct Loops {
    std::mutex m;
    std::condition_variable cv;
    int running = 0;
    std::string failure;
};

// One loop: acquire key, release it, record the cycle, again until `until`.
void cycle_once(const Client& c, const std::string& key, std::int64_t until,
                std::vector<double>& lat, Loops& loops) {
    auto t0 = now_ns();
    async_acquire(c, key, {}, {}, [&c, &key, until, &lat, &loops, t0](std::error_code ec, Lease l) {
        auto finish = [&loops](const std::string& why) {
            std::lock_guard lk(loops.m);
            if (!why.empty() && loops.failure.empty()) loops.failure = why;
            --loops.running;
            loops.cv.notify_all();
        };
        if (ec) return finish("acquire: " + ec.message());
        async_release(l, [&c, &key, until, &lat, &loops, t0, finish](std::error_code rec) {
            if (rec) return finish("release: " + rec.message());
            lat.push_back(double(now_ns() - t0) / 1000);
            if (now_ns() >= until) return finish("");
            cycle_once(c, key, until, lat, loops);
        });
    });
}

}  // namespace

int cycle_async(const Args& a) {
    ClientOptions opts;
    observe(a, opts);
    if (a.loop_spin_us >= 0) opts.loop_spin = std::chrono::microseconds(a.loop_spin_us);
    auto client = Client::connect(client_url(a), opts);
    std::vector<std::vector<double>> lat(a.threads);
    std::vector<std::string> keys;
    keys.reserve(a.threads);
    for (int t = 0; t < a.threads; ++t)
        keys.push_back(a.key + ":" + std::to_string(a.id) + ":" + std::to_string(t));
    Loops loops;
    loops.running = a.threads;
    auto start = now_ns();
    double cpu0 = cpu_seconds(), user0 = user_seconds();
    for (int t = 0; t < a.threads; ++t) cycle_once(client, keys[t], a.until_ns, lat[t], loops);
    {
        std::unique_lock lk(loops.m);
        loops.cv.wait(lk, [&] { return loops.running == 0; });
    }
    if (!loops.failure.empty()) {
        std::fprintf(stderr, "deadbolt-bench: %s\n", loops.failure.c_str());
        return 1;
    }
    print_cycles(lat, start, cpu0, user0);
    return 0;
}

}  // namespace deadbolt::bench

namespace deadbolt::bench {

// The other way a blocking API could work: each of --threads threads starts an asynchronous
// call and sleeps until its callback wakes it, so all of them share the loop's pipelined
// connection (one wake per reply). It measures that design against deadbolt's blocking path.
int cycle_loop_blocking(const Args& a) {
    ClientOptions opts;
    observe(a, opts);
    if (a.loop_spin_us >= 0) opts.loop_spin = std::chrono::microseconds(a.loop_spin_us);
    auto client = Client::connect(client_url(a), opts);
    run_cycles(a, [&](int t, std::vector<double>& lat) {
        std::string key = a.key + ":" + std::to_string(a.id) + ":" + std::to_string(t);
        std::binary_semaphore done{0};
        while (now_ns() < a.until_ns) {
            auto t0 = now_ns();
            Lease lease;
            std::error_code ec;
            async_acquire(client, key, {}, {}, [&](std::error_code e, Lease l) {
                ec = e;
                lease = std::move(l);
                done.release();
            });
            done.acquire();
            if (ec) throw std::runtime_error(ec.message());
            async_release(lease, [&](std::error_code e) {
                ec = e;
                done.release();
            });
            done.acquire();
            lat.push_back(double(now_ns() - t0) / 1000);
        }
    });
    return 0;
}
}  // namespace deadbolt::bench
