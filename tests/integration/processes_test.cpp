// Exclusion across processes: 8 worker processes read-modify-write one key under each
// primitive (1000 updates in total), and the negative control without a lock.
#include <gtest/gtest.h>

#include <future>

#include "redis_server.hpp"

using deadbolt::test::RedisServer;

namespace {

long long run_workers(RedisServer& srv, const std::string& mode, int per_worker, int pause_us) {
    srv.raw().cmd({"SET", "counter", "0"});
    srv.raw().cmd({"SET", "violations", "0"});
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

long long get(RedisServer& srv, const std::string& key) {
    auto r = srv.raw().cmd({"GET", key});
    return r.type == deadbolt::test::RawReply::nil ? 0 : std::stoll(r.str);
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

TEST(Processes, FairMutexLosesNoUpdateAcrossEightProcesses) {
    RedisServer srv;
    EXPECT_EQ(run_workers(srv, "fair", 50, 100), 400);
}

TEST(Processes, ReentrantMutexTakenTwiceLosesNoUpdateAcrossEightProcesses) {
    RedisServer srv;
    EXPECT_EQ(run_workers(srv, "reentrant", 50, 100), 400);
}

TEST(Processes, RWLockReadersNeverSeeAWriteAndWritersLoseNoUpdate) {
    RedisServer srv;
    // 8 x 100 iterations, every 4th a write: 200 writes; readers hold across a 500 us pause.
    EXPECT_EQ(run_workers(srv, "rw", 100, 500), 200);
    EXPECT_EQ(get(srv, "violations"), 0);
}

TEST(Processes, SemaphoreOfThreeNeverHasAFourthHolderButDoesShare) {
    RedisServer srv;
    run_workers(srv, "permits:3", 40, 2000);
    EXPECT_EQ(get(srv, "violations"), 0);
    EXPECT_LE(get(srv, "peak"), 3);
    EXPECT_GE(get(srv, "peak"), 2);  // more than one holder at a time: not a mutex
    EXPECT_EQ(get(srv, "inside"), 0);
}

TEST(Processes, MultiLockAndMutexOnASharedNameExcludeEachOtherAcrossEightProcesses) {
    RedisServer srv;
    EXPECT_EQ(run_workers(srv, "multi", 50, 100), 400);
    EXPECT_EQ(srv.raw().cmd({"EXISTS", "rmw-lock", "rmw-other"}).integer, 0);
}

TEST(Processes, OneLeaderAtATimeAcrossEightProcesses) {
    RedisServer srv;
    EXPECT_EQ(run_workers(srv, "elect", 50, 100), 400);
    EXPECT_EQ(srv.raw().cmd({"EXISTS", "rmw-election"}).integer, 0);
}
