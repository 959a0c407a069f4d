#include <cstdio>
#include <thread>

#include "deadbolt/deadbolt.hpp"
#include "scenarios.hpp"

namespace deadbolt::bench {
namespace {

std::string url(int port) {
    return "redis://127.0.0.1:" + std::to_string(port);
}

}  // namespace

int wait(const Args& a) {
    // Each waiter is its own client (its own connections), as separate processes would be.
    std::vector<Client> clients;
    clients.reserve(a.clients);
    for (int i = 0; i < a.clients; ++i) clients.push_back(Client::connect(url(a.port)));
    double cpu0 = cpu_seconds();
    auto deadline = Clock::now() + std::chrono::nanoseconds(a.until_ns - now_ns());
    std::atomic<int> acquired{0};
    std::vector<std::thread> ts;
    ts.reserve(a.clients);
    for (auto& c : clients)
        ts.emplace_back([&] {
            auto m = c.mutex(a.key);
            if (m.try_lock_until(deadline)) ++acquired, m.unlock();
        });
    for (auto& t : ts) t.join();
    std::printf("{\"clients\":%d,\"acquired\":%d,\"cpu_s\":%.3f}\n", a.clients, acquired.load(),
                cpu_seconds() - cpu0);
    return 0;
}

int renew(const Args& a) {
    auto client = Client::connect(url(a.port));
    MutexOptions o;
    o.ttl = std::chrono::milliseconds(a.ttl_ms);
    std::vector<Lease> leases(a.leases);
    std::vector<std::thread> ts;
    ts.reserve(a.threads);
    for (int t = 0; t < a.threads; ++t)  // threads share the client: their acquires pipeline
        ts.emplace_back([&, t] {
            for (int i = t; i < a.leases; i += a.threads)
                leases[i] = client.acquire(a.key + ":" + std::to_string(i), o);
        });
    for (auto& t : ts) t.join();
    double cpu0 = cpu_seconds();
    auto start = now_ns();
    std::printf("{\"phase\":\"holding\",\"t_ns\":%lld}\n", static_cast<long long>(start));
    std::fflush(stdout);  // the runner starts counting server commands now
    std::this_thread::sleep_for(std::chrono::nanoseconds(a.until_ns - start));
    double cpu = cpu_seconds() - cpu0, held_s = double(now_ns() - start) / 1e9;
    long valid = 0;
    for (auto& l : leases) valid += l.valid();
    std::printf("{\"leases\":%d,\"valid_at_end\":%ld,\"held_s\":%.3f,\"cpu_s\":%.3f}\n", a.leases,
                valid, held_s, cpu);
    return 0;
}

}  // namespace deadbolt::bench
