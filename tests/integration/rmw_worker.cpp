// rmw_worker: one process of the multi-process exclusion test. Loops: lock, GET counter,
// pause, SET counter+1, unlock. With "nolock" it skips the lock (the negative control).
#include <hiredis/hiredis.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "deadbolt/deadbolt.hpp"

int main(int argc, char** argv) {
    if (argc != 6) {
        std::fprintf(stderr, "usage: rmw_worker URL PORT ITERATIONS lock|nolock PAUSE_US\n");
        return 64;
    }
    std::string url = argv[1];
    int port = std::atoi(argv[2]);
    int iterations = std::atoi(argv[3]);
    bool use_lock = std::string(argv[4]) == "lock";
    auto pause = std::chrono::microseconds(std::atoi(argv[5]));
    redisContext* data = redisConnect("127.0.0.1", port);
    if (!data || data->err) return 69;
    auto client = deadbolt::Client::connect(url);
    auto m = client.mutex("rmw-lock");
    for (int i = 0; i < iterations; ++i) {
        if (use_lock) m.lock();
        auto* r = static_cast<redisReply*>(redisCommand(data, "GET counter"));
        long long v = r->type == REDIS_REPLY_STRING ? std::atoll(r->str) : 0;
        freeReplyObject(r);
        if (pause.count() > 0) std::this_thread::sleep_for(pause);
        r = static_cast<redisReply*>(redisCommand(data, "SET counter %lld", v + 1));
        freeReplyObject(r);
        if (use_lock) m.unlock();
    }
    redisFree(data);
    return 0;
}
