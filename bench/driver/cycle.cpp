#include <cstdio>
#include <memory>
#include <stdexcept>
#include <thread>

#include "backends/redis/scripts.hpp"
#include "deadbolt/deadbolt.hpp"
#include "deadbolt/redis_options.hpp"
#include "scenarios.hpp"

namespace deadbolt::bench {

void script_cycles(const ScriptConn& c, const std::string& key, std::int64_t until,
                   std::vector<double>& lat) {
    const auto& acq = detail::acquire_script();
    const auto& rel = detail::release_script();
    c({"SCRIPT", "LOAD", std::string(acq.source)});
    c({"SCRIPT", "LOAD", std::string(rel.source)});
    std::string fence = "{" + key + "}:fence", chan = "{" + key + "}:released",
                line = "{" + key + "}:waiters", token = "0123456789abcdef0123456789abcdef";
    while (now_ns() < until) {
        auto t0 = now_ns();
        c({"EVALSHA", acq.sha1, "3", key, fence, line, token, "30000", "90000", chan, "", ""});
        c({"EVALSHA", rel.sha1, "2", key, line, token, chan});
        lat.push_back(double(now_ns() - t0) / 1000);
    }
}

namespace {

void deadbolt_cycles(Client& client, const std::string& key, std::int64_t until,
                     std::vector<double>& lat) {
    auto m = client.mutex(key);
    while (now_ns() < until) {
        auto t0 = now_ns();
        m.lock();
        m.unlock();
        lat.push_back(double(now_ns() - t0) / 1000);
    }
}

}  // namespace

int cycle(const Args& a) {
    std::unique_ptr<Client> client;
    if (a.contender == "deadbolt") {
        ClientOptions opts;
        observe(a, opts);
        if (a.loop_spin_us >= 0) opts.loop_spin = std::chrono::microseconds(a.loop_spin_us);
        if (a.connections > 0) {
            RedisOptions r;
            r.command_connections = a.connections;
            opts.engine = std::make_shared<RedisOptions>(r);
        }
        client = std::make_unique<Client>(Client::connect(client_url(a), opts));
    } else if (!a.ports.empty()) {
        throw std::invalid_argument("--ports: only deadbolt runs Redlock here");
    }
    run_cycles(a, [&](int t, std::vector<double>& lat) {
        std::string key = a.key + ":" + std::to_string(a.id) + ":" + std::to_string(t);
        if (client)
            deadbolt_cycles(*client, key, a.until_ns, lat);
        else {
            Raw raw(a.port);
            script_cycles([&](const auto& argv) { raw.cmd(argv); }, key, a.until_ns, lat);
        }
    });
    return 0;
}

}  // namespace deadbolt::bench
