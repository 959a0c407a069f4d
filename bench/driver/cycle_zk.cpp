// Scenarios 1-2 against ZooKeeper with no library logic: one session through the C client
// and, per cycle, one ephemeral sequential create and its delete (the least a lock on
// ZooKeeper can cost).
#include <zookeeper/zookeeper.h>

#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "scenarios.hpp"

namespace deadbolt::bench {
namespace {

struct Connected {
    std::mutex m;
    std::condition_variable cv;
    bool up = false;
};

void watcher(zhandle_t* /*zh*/, int type, int state, const char* /*path*/, void* ctx) {
    auto* c = static_cast<Connected*>(ctx);
    if (type != ZOO_SESSION_EVENT || state != ZOO_CONNECTED_STATE) return;
    std::lock_guard lk(c->m);
    c->up = true;
    c->cv.notify_all();
}

void must(int rc, const char* what) {
    if (rc != ZOK && rc != ZNODEEXISTS)
        throw std::runtime_error(std::string("bench: zookeeper ") + what + ": " + zerror(rc));
}

}  // namespace

int cycle_raw_zk(const Args& a) {
    zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
    Connected c;
    zhandle_t* zh = zookeeper_init(a.zk.c_str(), watcher, 30000, nullptr, &c, 0);
    if (!zh) throw std::runtime_error("bench: zookeeper_init failed");
    {
        std::unique_lock lk(c.m);
        if (!c.cv.wait_for(lk, std::chrono::seconds(10), [&] { return c.up; }))
            throw std::runtime_error("bench: no ZooKeeper session within 10 s");
    }
    std::vector<std::string> dirs;
    // Persistent parents: the server deletes an empty container (deadbolt's lock znodes)
    // now and then, and this loop has no logic to make it again.
    for (int t = 0; t < a.threads; ++t) {
        dirs.push_back("/" + a.key + ":" + std::to_string(a.id) + ":" + std::to_string(t));
        must(zoo_create(zh, dirs.back().c_str(), nullptr, -1, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT,
                        nullptr, 0),
             "create");
    }
    run_cycles(a, [&](int t, std::vector<double>& lat) {
        auto prefix = dirs[t] + "/_c_00000000-0000-0000-0000-000000000000-lock-";
        char made[512];
        while (now_ns() < a.until_ns) {
            auto t0 = now_ns();
            must(zoo_create(zh, prefix.c_str(), "0123456789abcdef", 16, &ZOO_OPEN_ACL_UNSAFE,
                            ZOO_EPHEMERAL_SEQUENTIAL, made, sizeof made),
                 "create");
            must(zoo_delete(zh, made, -1), "delete");
            lat.push_back(double(now_ns() - t0) / 1000);
        }
    });
    zookeeper_close(zh);
    return 0;
}

}  // namespace deadbolt::bench
