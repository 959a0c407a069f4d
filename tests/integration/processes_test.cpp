// Exclusion across processes: 8 workers read-modify-write one key 1000 times in total.
#include <gtest/gtest.h>

#include <future>

#include "redis_server.hpp"

using deadbolt::test::RedisServer;

namespace {

long long run_workers(RedisServer& srv, const std::string& mode, int per_worker, int pause_us) {
    srv.raw().cmd({"SET", "counter", "0"});
    std::vector<std::future<int>> procs;
    std::string worker = deadbolt::test::self_dir() + "/rmw_worker";
    for (int i = 0; i < 8; ++i)
        procs.push_back(std::async(std::launch::async, [&] {
            std::string out;
            int rc = deadbolt::test::run_command(
                {worker, srv.url(), std::to_string(srv.port()), std::to_string(per_worker), mode,
                 std::to_string(pause_us)},
                &out);
            if (rc != 0) ADD_FAILURE() << "worker exit " << rc << ": " << out;
            return rc;
        }));
    for (auto& p : procs) p.get();
    return std::stoll(srv.raw().cmd({"GET", "counter"}).str);
}

}  // namespace

TEST(Processes, EightProcessesLoseNoUpdateUnderTheLock) {
    RedisServer srv;
    EXPECT_EQ(run_workers(srv, "lock", 125, 100), 1000);
}

TEST(Processes, WithoutTheLockUpdatesAreLost) {
    // The negative control: proves the workload can expose a broken lock.
    RedisServer srv;
    EXPECT_LT(run_workers(srv, "nolock", 125, 1000), 1000);
}
