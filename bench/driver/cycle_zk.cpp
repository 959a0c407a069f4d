// Scenarios 1-2 against ZooKeeper with no library logic: one session through the C client
// and, per cycle, one ephemeral sequential create and its delete (the least a lock on
// ZooKeeper can cost). With --statements 1, the requests deadbolt's Mutex sends instead: the
// create with its holder data and the line's listing pipelined behind it, a get with a watch on
// the granted node (what hears a loss), then the delete; so the gap between the two is what
// those requests cost the servers, and the gap to deadbolt what its own logic costs.
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

/// Replies a thread waits for: the C client answers them on its own thread.
struct Pending {
    std::mutex m;
    std::condition_variable cv;
    int left = 0;
    int rc = ZOK;
    std::string made;

    void done(int r) {
        std::lock_guard lk(m);
        if (r != ZOK && rc == ZOK) rc = r;
        if (--left == 0) cv.notify_all();
    }
    int wait() {
        std::unique_lock lk(m);
        cv.wait(lk, [&] { return left == 0; });
        return rc;
    }
};

void on_created(int rc, const char* path, const Stat* /*st*/, const void* d) {
    auto* p = static_cast<Pending*>(const_cast<void*>(d));
    if (rc == ZOK) p->made = path;
    p->done(rc);
}

void on_listed(int rc, const String_vector* /*kids*/, const void* d) {
    static_cast<Pending*>(const_cast<void*>(d))->done(rc);
}

void on_nothing(zhandle_t* /*zh*/, int /*type*/, int /*state*/, const char* /*path*/,
                void* /*ctx*/) {}
void on_data(int /*rc*/, const char* /*value*/, int /*len*/, const Stat* /*st*/,
             const void* /*d*/) {}

/// deadbolt's requests for one uncontended cycle, as the C client sends them; --leave-out
/// list|watch drops one, to measure what each costs the servers.
void deadbolt_cycle(zhandle_t* zh, const std::string& dir, const std::string& prefix,
                    const std::string& data, const std::string& leave_out) {
    const bool list = leave_out != "list", watch = leave_out != "watch";
    Pending p;
    p.left = list ? 2 : 1;
    must(zoo_acreate2(zh, prefix.c_str(), data.data(), static_cast<int>(data.size()),
                      &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL_SEQUENTIAL, on_created, &p),
         "create");
    if (list) must(zoo_aget_children(zh, dir.c_str(), 0, on_listed, &p), "list");
    must(p.wait(), "create and list");
    if (watch) must(zoo_awget(zh, p.made.c_str(), on_nothing, nullptr, on_data, nullptr), "watch");
    must(zoo_delete(zh, p.made.c_str(), -1), "delete");
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
        // deadbolt's holder data: its token, then its session's timeout.
        const std::string data = std::string(32, 'f') + " session_timeout=30000ms";
        while (now_ns() < a.until_ns) {
            auto t0 = now_ns();
            if (a.statements) {
                deadbolt_cycle(zh, dirs[t], prefix, data, a.leave_out);
                lat.push_back(double(now_ns() - t0) / 1000);
                continue;
            }
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
