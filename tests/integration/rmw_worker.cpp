// rmw_worker: one process of the multi-process tests. Loops ITERATIONS times over a critical
// section guarded by the primitive MODE names:
//   lock | fair | reentrant (taken twice) | nolock (the negative control): GET counter,
//     pause, SET counter+1;
//   rw: every 4th iteration a write as above under the write lock, the others a read under
//     the read lock that GETs counter twice around the pause (a change is a violation);
//   permits:N: a Semaphore of N; INCR inside, record the peak, count a violation above N;
//   multi: alternately a MultiLock over {rmw-lock, rmw-other} (in an order that depends on the
//     process id, so opposite orders meet) and the plain Mutex rmw-lock, as in lock;
//   elect: campaign, read-modify-write as leader, resign.
#include <hiredis/hiredis.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>

#include <unistd.h>

#include "deadbolt/deadbolt.hpp"

namespace {

long long get(redisContext* c, const char* key) {
    auto* r = static_cast<redisReply*>(redisCommand(c, "GET %s", key));
    long long v = r->type == REDIS_REPLY_STRING ? std::atoll(r->str) : 0;
    freeReplyObject(r);
    return v;
}

void run(redisContext* c, const char* fmt, long long v = 0) {
    freeReplyObject(redisCommand(c, fmt, v));
}

void rmw(redisContext* data, std::chrono::microseconds pause) {
    long long v = get(data, "counter");
    if (pause.count() > 0) std::this_thread::sleep_for(pause);
    run(data, "SET counter %lld", v + 1);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 6) {
        std::fprintf(stderr, "usage: rmw_worker URL PORT ITERATIONS MODE PAUSE_US\n");
        return 64;
    }
    std::string url = argv[1];
    int port = std::atoi(argv[2]);
    int iterations = std::atoi(argv[3]);
    std::string mode = argv[4];
    auto pause = std::chrono::microseconds(std::atoi(argv[5]));
    redisContext* data = redisConnect("127.0.0.1", port);
    if (!data || data->err) return 69;
    auto client = deadbolt::Client::connect(url);
    auto m = client.mutex("rmw-lock");
    auto fair = client.fair_mutex("rmw-fair");
    auto re = client.reentrant_mutex("rmw-reentrant");
    auto rw = client.rwlock("rmw-rw");
    int permits = mode.rfind("permits:", 0) == 0 ? std::atoi(mode.c_str() + 8) : 1;
    auto sem = client.semaphore("rmw-sem", permits);
    auto multi = getpid() % 2 == 0 ? client.multi_lock({"rmw-lock", "rmw-other"})
                                   : client.multi_lock({"rmw-other", "rmw-lock"});
    auto election = client.election("rmw-election");
    for (int i = 0; i < iterations; ++i) {
        if (mode == "lock") {
            std::lock_guard lk(m);
            rmw(data, pause);
        } else if (mode == "fair") {
            std::lock_guard lk(fair);
            rmw(data, pause);
        } else if (mode == "reentrant") {
            std::lock_guard outer(re);
            std::lock_guard inner(re);
            if (re.hold_count() != 2) return 70;
            rmw(data, pause);
        } else if (mode == "multi" && i % 2 == 0) {
            std::lock_guard lk(multi);
            if (multi.lease().fences().size() != 2) return 70;
            rmw(data, pause);
        } else if (mode == "multi") {
            std::lock_guard lk(m);
            rmw(data, pause);
        } else if (mode == "elect") {
            election.campaign(std::to_string(getpid()));
            rmw(data, pause);
            election.resign();
        } else if (mode == "rw" && i % 4 == 0) {
            std::lock_guard lk(rw);
            rmw(data, pause);
        } else if (mode == "rw") {
            std::shared_lock lk(rw);
            long long before = get(data, "counter");
            if (pause.count() > 0) std::this_thread::sleep_for(pause);
            if (get(data, "counter") != before) run(data, "INCR violations");
        } else if (mode.rfind("permits:", 0) == 0) {
            sem.acquire();
            auto* r = static_cast<redisReply*>(
                redisCommand(data, "EVAL %s 2 inside peak",
                             "local n = redis.call('INCR', KEYS[1]) "
                             "if n > tonumber(redis.call('GET', KEYS[2]) or '0') then "
                             "redis.call('SET', KEYS[2], n) end return n"));
            long long n = r->integer;
            freeReplyObject(r);
            if (n > permits) run(data, "INCR violations");
            if (pause.count() > 0) std::this_thread::sleep_for(pause);
            run(data, "DECR inside");
            sem.release();
        } else {
            rmw(data, pause);  // nolock
        }
    }
    redisFree(data);
    return 0;
}
