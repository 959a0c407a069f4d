#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>

#include "deadbolt/deadbolt.hpp"
#include "redis/scripts.hpp"
#include "scenarios.hpp"

namespace deadbolt::bench {

int contend(const Args& a) {
    Raw data(a.port);  // the counter the critical section increments
    std::string counter = a.key + ":counter";
    std::unique_ptr<Client> client;
    std::unique_ptr<Raw> raw;
    std::optional<Mutex> m;
    const auto& acq = detail::acquire_script();
    const auto& rel = detail::release_script();
    std::string fence = "{" + a.key + "}:fence", chan = "{" + a.key + "}:released",
                token = "token-" + std::to_string(a.id) + "-0123456789abcdef";
    if (a.contender == "deadbolt") {
        client = std::make_unique<Client>(
            Client::connect("redis://127.0.0.1:" + std::to_string(a.port)));
        m.emplace(client->mutex(a.key));
    } else {
        raw = std::make_unique<Raw>(a.port);
        raw->cmd({"SCRIPT", "LOAD", std::string(acq.source)});
        raw->cmd({"SCRIPT", "LOAD", std::string(rel.source)});
    }
    // Every process starts contending at once, however long each took to start up.
    std::this_thread::sleep_for(
        std::chrono::nanoseconds(std::max<std::int64_t>(0, a.start_ns - now_ns())));
    auto deadline = Clock::now() + std::chrono::nanoseconds(a.until_ns - now_ns());
    std::string events;
    long failures = 0, n = 0;
    double cpu0 = cpu_seconds();
    while (now_ns() < a.until_ns) {
        auto invoked = now_ns();
        bool ok = false;
        if (m) {
            ok = m->try_lock_until(deadline);
        } else {
            while (!ok && now_ns() < a.until_ns)  // a busy retry: no sleep at all
                ok = raw->cmd({"EVALSHA", acq.sha1, "2", a.key, fence, token, "30000", "90000"}) ==
                     1;
        }
        if (!ok) {
            ++failures;
            continue;
        }
        auto got = now_ns();
        data.cmd({"SET", counter, std::to_string(data.cmd({"GET", counter}) + 1)});
        auto released = now_ns();
        if (m)
            m->unlock();
        else
            raw->cmd({"EVALSHA", rel.sha1, "1", a.key, token, chan});
        events += (n++ ? ",[" : "[") + std::to_string(invoked) + "," + std::to_string(got) + "," +
                  std::to_string(released) + "]";
    }
    std::printf("{\"id\":%d,\"failures\":%ld,\"cpu_s\":%.3f,\"events\":[%s]}\n", a.id, failures,
                cpu_seconds() - cpu0, events.c_str());
    return 0;
}

}  // namespace deadbolt::bench
