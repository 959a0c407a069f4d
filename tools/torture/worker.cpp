#include "worker.hpp"

#include <hiredis/hiredis.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <thread>

#include "deadbolt/deadbolt.hpp"
#include "history.hpp"
#include "locks.hpp"

namespace deadbolt::torture {

int run_worker(const WorkerConfig& c) {
    std::ofstream out(c.history_path, std::ios::app);  // a replacement worker appends
    auto record = [&](Event e) {
        e.worker = c.id;
        out << to_json(e) << '\n';
        out.flush();  // a killed worker leaves its history up to its last step
    };
    // A worker started while the lock server is down (kill during a restart) keeps trying.
    std::unique_ptr<LockAdapter> lock;
    while (!lock && now_ns() < c.end_ns) {
        try {
            lock = make_lock(c.lock, c.lock_url, c.lock_port, c.ttl, c.clock);
        } catch (const std::exception&) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    }
    if (!lock) return 0;
    redisContext* data = redisConnect("127.0.0.1", c.data_port);
    if (!data || data->err) return 69;
    std::optional<Client> fenced_data;
    if (c.fenced)
        fenced_data.emplace(Client::connect("redis://127.0.0.1:" + std::to_string(c.data_port)));
    std::mt19937 rng(std::random_device{}());
    while (now_ns() < c.end_ns) {
        std::int64_t invoked = now_ns();
        record({Event::Kind::acquire_invoke, 0, invoked});
        std::optional<Holding> h;
        try {
            h = lock->acquire(std::chrono::milliseconds(1000));
        } catch (const std::exception&) {
            record({Event::Kind::acquire_unknown, 0, now_ns()});
            continue;
        }
        if (!h) {
            record({Event::Kind::acquire_fail, 0, now_ns()});
            continue;
        }
        Event ok{Event::Kind::acquire_ok, 0, now_ns(), h->fence, h->valid_until};
        ok.invoked = invoked;
        record(ok);
        c.holding->store(1);
        // Fenced: the value and its version together, for a compare-and-set that loses no
        // update even where holders overlap.
        long long v = 0;
        std::uint64_t version = 0;
        redisReply* r = nullptr;
        if (c.fenced) {
            auto read = fenced_data->fenced_get("register");
            v = read.value ? std::atoll(read.value->c_str()) : 0;
            version = read.version;
        } else {
            r = static_cast<redisReply*>(redisCommand(data, "GET register"));
            v = r && r->type == REDIS_REPLY_STRING ? std::atoll(r->str) : 0;
            if (r) freeReplyObject(r);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(rng() % (c.hold.count() + 1)));
        Event w{Event::Kind::write, 0, 0, h->fence};
        w.value = v + 1;
        w.invoked = now_ns();
        if (c.fenced) {
            w.accepted =
                fenced_data->fenced_cas("register", std::to_string(v + 1), h->fence, version)
                    .accepted;
        } else {
            r = static_cast<redisReply*>(redisCommand(data, "SET register %lld", v + 1));
            w.accepted = r && r->type == REDIS_REPLY_STATUS;
            if (r) freeReplyObject(r);
        }
        w.t = now_ns();
        record(w);
        r = static_cast<redisReply*>(redisCommand(data, "RPUSH log %d", c.id));  // who wrote when
        if (r) freeReplyObject(r);
        c.holding->store(0);
        Event rel{Event::Kind::release, 0, now_ns()};
        rel.valid_until = lock->valid_until();
        record(rel);
        lock->release();
    }
    redisFree(data);
    return 0;
}

}  // namespace deadbolt::torture
