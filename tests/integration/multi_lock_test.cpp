// MultiLock: all names or none, woken by any name's release, one lease renewing all of them.
#include <gtest/gtest.h>

#include <mutex>
#include <thread>

#include "deadbolt/deadbolt.hpp"
#include "eventually.hpp"
#include "redis_server.hpp"

using namespace std::chrono_literals;
using deadbolt::test::RedisServer;

template class std::unique_lock<deadbolt::MultiLock>;

namespace {

long long exists(RedisServer& srv, std::vector<std::string> keys) {
    keys.insert(keys.begin(), "EXISTS");
    return srv.raw().cmd(keys).integer;
}

}  // namespace

TEST(MultiLock, TakesEveryNameOrNoneAndHasAFencePerName) {
    RedisServer srv;
    auto client = deadbolt::Client::connect(srv.url());
    auto b = client.mutex("b");
    b.lock();
    auto b_fence = b.lease().fence();
    auto multi = client.multi_lock({"a", "b", "c"});
    EXPECT_FALSE(multi.try_lock());
    EXPECT_EQ(exists(srv, {"a", "c"}), 0) << "a failed attempt left part of the set behind";
    EXPECT_EQ(srv.raw().cmd({"GET", "b"}).str, b.lease().token());
    b.unlock();

    ASSERT_TRUE(multi.try_lock());
    auto& lease = multi.lease();
    for (const char* k : {"a", "b", "c"}) EXPECT_EQ(srv.raw().cmd({"GET", k}).str, lease.token());
    auto fences = lease.fences();
    ASSERT_EQ(fences.size(), 3U);
    EXPECT_EQ(fences[0].name, "a");
    EXPECT_EQ(fences[1].name, "b");
    EXPECT_EQ(fences[2].name, "c");
    EXPECT_GT(fences[1].fence, b_fence);
    EXPECT_EQ(lease.fence(), fences[0].fence);
    EXPECT_FALSE(client.mutex("c").try_lock()) << "a Mutex on one of the names got in";
    multi.unlock();
    EXPECT_EQ(exists(srv, {"a", "b", "c"}), 0);
}

TEST(MultiLock, ADeadHoldersKeyIsWaitedOutUntilItExpires) {
    RedisServer srv;
    auto client = deadbolt::Client::connect(srv.url());
    srv.raw().cmd({"SET", "b", "ghost", "PX", "300"});
    auto multi = client.multi_lock({"a", "b"});
    EXPECT_FALSE(multi.try_lock());
    EXPECT_TRUE(multi.try_lock_for(5s));
    EXPECT_NE(srv.raw().cmd({"GET", "b"}).str, "ghost");
}

TEST(MultiLock, AWrongTypedKeyFailsTheAttemptAndWritesNothing) {
    RedisServer srv;
    auto client = deadbolt::Client::connect(srv.url());
    srv.raw().cmd({"HSET", "c", "f", "v"});
    auto multi = client.multi_lock({"a", "b", "c"});
    std::error_code ec;
    EXPECT_FALSE(multi.try_lock(ec));
    EXPECT_EQ(ec, deadbolt::make_error_code(deadbolt::errc::wrong_type)) << ec.message();
    EXPECT_THROW(multi.lock(), deadbolt::ServerError);
    EXPECT_EQ(exists(srv, {"a", "b", "{a}:fence", "{b}:fence"}), 0);
    EXPECT_EQ(srv.raw().cmd({"TYPE", "c"}).str, "hash");
}

TEST(MultiLock, RenewsEveryNameAndIsLostWhenAnyOneIsTaken) {
    RedisServer srv;
    auto client = deadbolt::Client::connect(srv.url());
    std::atomic<int> lost_calls{0};
    deadbolt::MutexOptions o;
    o.ttl = 300ms;
    o.on_lost = [&](std::string_view, std::error_code) { ++lost_calls; };
    auto multi = client.multi_lock({"a", "b", "c"}, o);
    multi.lock();
    std::this_thread::sleep_for(1s);  // over three TTLs: only renewal keeps it
    auto& lease = multi.lease();
    EXPECT_TRUE(lease.valid());
    EXPECT_TRUE(lease.is_current());
    for (const char* k : {"a", "b", "c"}) EXPECT_GT(srv.raw().cmd({"PTTL", k}).integer, 0);

    srv.raw().cmd({"SET", "b", "thief"});  // another owner took one name
    auto stop = lease.stop_token();
    for (int i = 0; i < 300 && !stop.stop_requested(); ++i) std::this_thread::sleep_for(10ms);
    EXPECT_TRUE(stop.stop_requested());
    EXPECT_TRUE(lease.lost());
    EXPECT_FALSE(lease.is_current());
    // on_lost runs just after the stop token fires.
    EXPECT_TRUE(deadbolt::test::eventually([&] { return lost_calls.load() == 1; }));
    multi.unlock();  // never throws; frees the names still ours, leaves the thief's
    EXPECT_EQ(exists(srv, {"a", "c"}), 0);
    EXPECT_EQ(srv.raw().cmd({"GET", "b"}).str, "thief");
}

TEST(MultiLock, AWaiterOnManyNamesSubscribesToThemAllInOneRoundTrip) {
    RedisServer srv;
    auto holder = deadbolt::Client::connect(srv.url());
    auto waiter = deadbolt::Client::connect(srv.url());
    std::vector<std::string> names;
    for (int i = 0; i < 300; ++i) names.push_back("n" + std::to_string(i));
    deadbolt::MutexOptions long_ttl;
    long_ttl.ttl = 30s;
    auto last = holder.mutex(names.back(), long_ttl);
    last.lock();
    auto raw = srv.raw();
    auto reads_before = raw.stat("total_reads_processed");
    auto multi = waiter.multi_lock(names);
    std::atomic<bool> got{false};
    std::thread t([&] { got = multi.try_lock_for(10s); });
    for (int i = 0; i < 500 && raw.cmd({"ZCARD", "{n299}:waiters"}).integer == 0; ++i)
        std::this_thread::sleep_for(10ms);
    // Two attempts and one SUBSCRIBE (the client's inbox: the 300 names' mailboxes are the
    // client's own); 300 SUBSCRIBEs one at a time would take 300 reads or more.
    EXPECT_LT(raw.stat("total_reads_processed") - reads_before, 60);
    last.unlock();
    t.join();
    EXPECT_TRUE(got) << "not woken by the release of the last of 300 names";
}
