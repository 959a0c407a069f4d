// LeaderElection: one leader per term, rising terms, observers woken by every change.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "deadbolt/deadbolt.hpp"
#include "redis_server.hpp"

using namespace std::chrono_literals;
using deadbolt::test::RedisServer;
using Clock = std::chrono::steady_clock;

namespace {

deadbolt::AcquireOptions within(std::chrono::milliseconds d) {
    deadbolt::AcquireOptions how;
    how.deadline = Clock::now() + d;
    return how;
}

}  // namespace

TEST(LeaderElection, OneLeaderAtATimeAndEveryNewLeaderHasAHigherTerm) {
    RedisServer srv;
    std::atomic<int> leading{0}, overlaps{0};
    std::mutex m;
    std::vector<std::uint64_t> terms;
    std::vector<std::thread> threads;
    for (int i = 0; i < 5; ++i)
        threads.emplace_back([&, i] {
            auto client = deadbolt::Client::connect(srv.url());
            auto e = client.election("primary");
            for (int round = 0; round < 3; ++round) {
                auto& term = e.campaign("node-" + std::to_string(i));
                if (++leading != 1) ++overlaps;
                {
                    std::lock_guard lk(m);
                    terms.push_back(term.fence());
                }
                std::this_thread::sleep_for(5ms);
                --leading;
                e.resign();
            }
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(overlaps.load(), 0);
    ASSERT_EQ(terms.size(), 15U);
    for (std::size_t i = 1; i < terms.size(); ++i) EXPECT_GT(terms[i], terms[i - 1]) << i;
    EXPECT_EQ(srv.raw().cmd({"EXISTS", "primary"}).integer, 0);
}

TEST(LeaderElection, ObserversSeeElectionProclamationAndResignationAsTheyHappen) {
    RedisServer srv;
    auto a = deadbolt::Client::connect(srv.url());
    auto b = deadbolt::Client::connect(srv.url());
    auto watcher = deadbolt::Client::connect(srv.url());
    deadbolt::MutexOptions long_term;
    long_term.ttl = 30s;  // nothing here may be explained by an expiry
    auto ea = a.election("svc", long_term);
    auto eb = b.election("svc", long_term);
    auto w = watcher.election("svc");

    deadbolt::Leader seen = w.leader();
    EXPECT_FALSE(seen.elected);
    std::vector<deadbolt::Leader> events;
    std::atomic<std::size_t> seen_n{0};
    std::thread observer([&] {
        while (events.size() < 6) {
            seen = w.observe(seen, within(10s));
            events.push_back(seen);
            ++seen_n;
            if (seen.value == "10.0.0.2:80") break;
        }
    });
    auto step = [&](std::size_t n) {  // wait until the observer has seen n events
        for (int i = 0; i < 1000 && seen_n < n; ++i) std::this_thread::sleep_for(5ms);
    };
    ea.campaign("10.0.0.1:80");
    step(1);
    ea.proclaim("10.0.0.1:81");
    step(2);
    std::thread candidate([&] { eb.campaign("10.0.0.2:80", within(10s)); });
    step(2);
    ea.resign();  // b is elected at once: the observer may see nobody in between, then b
    candidate.join();
    observer.join();
    ASSERT_GE(events.size(), 3U);
    ASSERT_LE(events.size(), 4U) << "changes that did not happen were reported";
    EXPECT_EQ(events[0].value, "10.0.0.1:80");
    EXPECT_EQ(events[1].value, "10.0.0.1:81");
    EXPECT_EQ(events[1].term, events[0].term) << "a proclamation is not a new term";
    EXPECT_TRUE(events.back().elected);
    EXPECT_EQ(events.back().value, "10.0.0.2:80");
    EXPECT_GT(events.back().term, events[1].term);
    EXPECT_EQ(eb.term().fence(), events.back().term);
}

TEST(LeaderElection, ALostTermIsSignalledAndCannotProclaim) {
    RedisServer srv;
    auto client = deadbolt::Client::connect(srv.url());
    deadbolt::MutexOptions o;
    o.ttl = 300ms;
    auto e = client.election("job", o);
    auto& term = e.campaign("me");
    std::this_thread::sleep_for(1s);  // renewed past three TTLs
    EXPECT_TRUE(term.is_current());
    EXPECT_EQ(e.leader().value, "me");
    srv.raw().cmd({"HSET", "job", "leader", "usurper"});
    auto stop = term.stop_token();
    for (int i = 0; i < 300 && !stop.stop_requested(); ++i) std::this_thread::sleep_for(10ms);
    EXPECT_TRUE(term.lost());
    EXPECT_THROW(e.proclaim("still me"), deadbolt::LockError);
    EXPECT_EQ(e.leader().value, "me") << "a deposed leader changed the value";
    e.resign();  // never throws
}

TEST(LeaderElection, ADeadLeaderIsReplacedWhenItsTermExpires) {
    RedisServer srv;
    auto client = deadbolt::Client::connect(srv.url());
    srv.raw().cmd({"HSET", "svc", "leader", "ghost", "value", "old", "term", "5"});
    srv.raw().cmd({"PEXPIRE", "svc", "300"});
    auto e = client.election("svc");
    auto seen = e.leader();
    EXPECT_EQ(seen.value, "old");
    auto next = e.observe(seen, within(5s));  // woken at the expiry, not by a message
    EXPECT_FALSE(next.elected);
    auto& term = e.campaign("new", within(5s));
    EXPECT_GT(term.fence(), 5U);
    EXPECT_EQ(client.status("svc").kind, "leader");
}

TEST(LeaderElection, BadInputIsRefused) {
    RedisServer srv;
    auto client = deadbolt::Client::connect(srv.url());
    auto e = client.election("x");
    EXPECT_THROW(e.proclaim("v"), deadbolt::LockError);
    EXPECT_THROW(e.campaign(std::string(deadbolt::kMaxLeaderValueBytes + 1, 'v')),
                 deadbolt::UsageError);
    e.campaign(std::string("bin\0ary", 7));
    EXPECT_EQ(e.leader().value, std::string("bin\0ary", 7));
    EXPECT_THROW(e.campaign("again"), deadbolt::UsageError);
    EXPECT_THROW(client.election(""), deadbolt::UsageError);
    srv.raw().cmd({"SET", "str", "v"});
    auto wrong = client.election("str");
    try {
        wrong.campaign("v", within(1s));
        ADD_FAILURE() << "campaigned on a string key";
    } catch (const deadbolt::ServerError& ex) {
        EXPECT_EQ(ex.code(), deadbolt::make_error_code(deadbolt::errc::wrong_type));
    }
    EXPECT_EQ(srv.raw().cmd({"GET", "str"}).str, "v");
}
