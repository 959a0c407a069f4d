// A holder hears of its loss at once where Redis can tell (issue 30 item 2): force-unlock's
// notice, a keyspace event for its key when the server sends them, a server that came back
// without the data. Each lease here would otherwise learn of the loss only when its validity
// runs out (no renewal, a TTL of two minutes), far past what each test waits: so hearing of
// it at all within the test is the behaviour asserted, not how fast.
#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <string_view>
#include <system_error>

#include "deadbolt/deadbolt.hpp"
#include "eventually.hpp"
#include "redis_server.hpp"

using namespace std::chrono_literals;
using deadbolt::test::eventually;
using deadbolt::test::RedisServer;

namespace {

// A lease that never renews: its loss can only be told, or found when its validity runs out.
struct Watched {
    std::shared_ptr<std::promise<std::error_code>> told =
        std::make_shared<std::promise<std::error_code>>();
    std::future<std::error_code> lost = told->get_future();

    deadbolt::MutexOptions options() const {
        deadbolt::MutexOptions o;
        o.ttl = 120s;
        o.auto_renew = false;
        o.on_lost = [p = told](std::string_view, std::error_code why) { p->set_value(why); };
        return o;
    }
    bool heard(std::chrono::seconds within = 30s) {
        return lost.wait_for(within) == std::future_status::ready;
    }
};

long long listening(deadbolt::test::Raw& raw, const std::string& channel) {
    return raw.cmd({"PUBSUB", "NUMSUB", channel}).elements.at(1).integer;
}

// The holder's subscriber starts with its first holding, in the background: a notice sent
// before it listens reaches nobody (the lease then learns at its next renewal, as before).
void until_listening(deadbolt::test::Raw& raw, const std::string& channel = "{deadbolt}:freed") {
    ASSERT_TRUE(eventually([&] { return listening(raw, channel) >= 1; })) << channel;
}

}  // namespace

TEST(LossNotice, ForceUnlockIsHeardByTheHolderAtOnce) {
    RedisServer srv;
    auto raw = srv.raw();
    auto holder = deadbolt::Client::connect(srv.url());
    auto admin = deadbolt::Client::connect(srv.url());
    Watched w;
    auto lease = holder.acquire("fu", w.options());
    until_listening(raw);
    EXPECT_EQ(admin.force_unlock("fu"), "mutex");
    ASSERT_TRUE(w.heard()) << "the holder trusted a force-unlocked lease";
    EXPECT_EQ(w.lost.get(), deadbolt::errc::not_owner);
    EXPECT_TRUE(lease.lost());
    EXPECT_TRUE(lease.stop_token().stop_requested());
}

TEST(LossNotice, ForceUnlockOfAnotherNameLeavesAHolderAlone) {
    RedisServer srv;
    auto raw = srv.raw();
    auto holder = deadbolt::Client::connect(srv.url());
    Watched kept, freed;
    auto a = holder.acquire("kept", kept.options());
    auto b = holder.acquire("freed", freed.options());
    until_listening(raw);
    deadbolt::Client::connect(srv.url()).force_unlock("freed");
    ASSERT_TRUE(freed.heard());
    EXPECT_FALSE(a.lost()) << "a notice for one name cost another its lease";
    EXPECT_TRUE(a.is_current());
}

TEST(LossNotice, ReadersAndPermitsHearOfForceUnlockToo) {
    RedisServer srv;
    auto raw = srv.raw();
    auto holder = deadbolt::Client::connect(srv.url());
    Watched reader, permit;
    auto r = holder.acquire("shared", deadbolt::LockMode::shared, reader.options());
    auto sem = holder.semaphore("pool", 2, permit.options());
    ASSERT_TRUE(sem.try_acquire());
    until_listening(raw);
    auto admin = deadbolt::Client::connect(srv.url());
    EXPECT_EQ(admin.force_unlock("shared"), "readers");
    EXPECT_EQ(admin.force_unlock("pool"), "semaphore");
    EXPECT_TRUE(reader.heard()) << "the reader";
    EXPECT_TRUE(permit.heard()) << "the permit";
}

TEST(LossNotice, ADeletedKeyIsHeardWhenTheServerSendsKeyspaceEvents) {
    RedisServer srv({"--notify-keyspace-events", "Kg"});
    auto raw = srv.raw();
    auto holder = deadbolt::Client::connect(srv.url());
    Watched w;
    auto lease = holder.acquire("ks", w.options());
    until_listening(raw, "__keyspace@0__:ks");
    raw.cmd({"DEL", "ks"});
    ASSERT_TRUE(w.heard()) << "the holder trusted a deleted key";
    EXPECT_EQ(w.lost.get(), deadbolt::errc::not_owner);
}

TEST(LossNotice, KeyspaceEventsCostNothingWhenTheServerHasThemOff) {
    RedisServer srv;  // notify-keyspace-events "" (Redis's default)
    auto raw = srv.raw();
    auto holder = deadbolt::Client::connect(srv.url());
    auto before = raw.calls("subscribe");
    auto lease = holder.acquire("quiet");
    until_listening(raw);  // the subscriber is up, and read the setting before subscribing
    auto more = holder.acquire("quiet-2");
    EXPECT_EQ(listening(raw, "__keyspace@0__:quiet"), 0);
    EXPECT_EQ(listening(raw, "__keyspace@0__:quiet-2"), 0);
    EXPECT_EQ(raw.calls("subscribe") - before, 1) << "one SUBSCRIBE: the client's own channels";
}

TEST(LossNotice, AReleaseStopsWatchingItsKey) {
    RedisServer srv({"--notify-keyspace-events", "KEA"});
    auto raw = srv.raw();
    auto holder = deadbolt::Client::connect(srv.url());
    {
        auto lease = holder.acquire("brief");
        until_listening(raw, "__keyspace@0__:brief");
    }
    EXPECT_TRUE(eventually([&] { return listening(raw, "__keyspace@0__:brief") == 0; }))
        << "a released lease still listened for its key";
}

TEST(LossNotice, ARestartWithoutPersistenceIsHeardWhenTheSubscriberComesBack) {
    RedisServer srv;  // the fixture's servers keep nothing on disk
    auto holder = deadbolt::Client::connect(srv.url());
    Watched w;
    auto lease = holder.acquire("gone", w.options());
    {
        auto raw = srv.raw();
        until_listening(raw);
    }
    srv.restart();
    ASSERT_TRUE(w.heard()) << "the holder trusted a lease the restarted server forgot";
    EXPECT_EQ(w.lost.get(), deadbolt::errc::not_owner);
}

TEST(LossNotice, ARestartThatKeptTheKeyCostsTheHolderNothing) {
    // AOF with fsync at every write: the server comes back with the key, and the check the
    // reconnect brings finds it ours.
    RedisServer srv({"--appendonly", "yes", "--appendfsync", "always"});
    auto holder = deadbolt::Client::connect(srv.url());
    Watched w;
    auto lease = holder.acquire("kept", w.options());
    {
        auto raw = srv.raw();
        until_listening(raw);
    }
    srv.restart();
    auto again = srv.raw();
    until_listening(again);  // the subscriber is back, and has had every holding checked
    EXPECT_FALSE(w.heard(1s));
    EXPECT_TRUE(lease.is_current());
}
