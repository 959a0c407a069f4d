// Redlock beyond Mutex: ReentrantMutex, RWLock, MultiLock and LeaderElection over independent
// redis-servers keep their promises with a majority, fences included.
#include <gtest/gtest.h>

#include <thread>

#include "acquire_options.hpp"
#include "backends/redis/scripts.hpp"
#include "deadbolt/deadbolt.hpp"
#include "eventually.hpp"
#include "redlock_nodes.hpp"
#include "tcp_proxy.hpp"

using namespace std::chrono_literals;
using deadbolt::errc;
using deadbolt::test::code_of;
using deadbolt::test::eventually;
using deadbolt::test::no_wait;
using deadbolt::test::RedlockNodes;
using deadbolt::test::TcpProxy;
using deadbolt::test::wait_for;

namespace {

const std::string kAhead = "5000000000000000";  // far above any server's time in µs

}  // namespace

TEST(RedlockPrimitives, ReentrantMutexReentersWithItsFenceAndExcludesOtherOwners) {
    RedlockNodes c(3);
    auto a = deadbolt::Client::connect(c.url());
    auto b = deadbolt::Client::connect(c.url());
    auto ma = a.reentrant_mutex("job");
    auto mb = b.reentrant_mutex("job");
    ma.lock();
    const auto fence = ma.lease().fence();
    c[2].stop();  // a re-entry needs a majority too, and keeps the fence
    ma.lock();
    EXPECT_EQ(ma.hold_count(), 2u);
    EXPECT_EQ(ma.lease().fence(), fence) << "a re-entry must not get a new fence";
    EXPECT_EQ(c.answering({"HGET", "job", ma.owner()}, "2"), 2);
    // Round 2 left the agreed fence in every node's hash, so re-entries return it.
    EXPECT_EQ(c.answering({"HGET", "job", ""}, std::to_string(fence)), 2);
    EXPECT_FALSE(mb.try_lock());
    ma.unlock();
    EXPECT_FALSE(mb.try_lock()) << "one of two holds released the lock";
    ma.unlock();
    EXPECT_EQ(c.answering({"TYPE", "job"}, "none"), 2);
    ASSERT_TRUE(mb.try_lock());
    EXPECT_GT(mb.lease().fence(), fence);
    mb.unlock();
}

TEST(RedlockPrimitives, AReentrantGiveBackLeftLateSparesTheOwnersNextGrant) {
    // A failed attempt's give-back that a node answers late (in the background) carries the
    // highest fence that attempt could have left there. By then the owner (whose token never
    // changes) may hold the name again there, with a higher fence: the give-back must leave
    // that alone, where the plain release would delete it.
    RedlockNodes c(3);
    auto a = deadbolt::Client::connect(c.url());
    auto m = a.reentrant_mutex("job");
    m.lock();
    const std::string stale = c[0].raw().cmd({"HGET", "job", ""}).str;
    m.unlock();
    m.lock();  // the owner's next grant
    const std::string now = c[0].raw().cmd({"HGET", "job", ""}).str;
    ASSERT_GT(std::stoull(now), std::stoull(stale));
    const auto& give_back = *deadbolt::detail::reentrant_kind().give_back;
    auto late = [&](const std::string& bound) {
        return c[0]
            .raw()
            .cmd({"EVAL", give_back.source, "2", "job", "job-line", m.owner(), "", "30000", bound})
            .integer;
    };
    EXPECT_EQ(late(stale), 0);
    EXPECT_EQ(c[0].raw().cmd({"HGET", "job", m.owner()}).str, "1") << "the late give-back took it";
    EXPECT_EQ(late(now), 1);  // bounded by its own fence, it gives back
    EXPECT_EQ(c[0].raw().cmd({"EXISTS", "job"}).integer, 0);
}

TEST(RedlockPrimitives, AFailedReentrantAttemptGivesBackWhatItWasGranted) {
    // Node 0 grants; the answers of nodes 1 and 2 are held back, so the attempt fails (no
    // quorum) once it has heard node 0's grant (a reentrant round waits for every node), and
    // gives that grant back, bounded by the fence it carried. (Refusals instead could decide
    // the round before node 0's grant is heard: a fixed owner gives back only what it heard.)
    RedlockNodes c(3);
    TcpProxy slow1(c[1].port()), slow2(c[2].port());
    auto a = deadbolt::Client::connect(deadbolt::test::redlock_url(
        {c[0].port(), slow1.port(), slow2.port()}, "command_timeout=200ms"));
    auto warm = a.reentrant_mutex("warm");
    warm.lock();  // scripts loaded and sessions open everywhere
    warm.unlock();
    slow1.stall_replies(true);
    slow2.stall_replies(true);
    auto ma = a.reentrant_mutex("job");
    EXPECT_EQ(code_of([&] { EXPECT_FALSE(ma.try_lock()); }), errc::no_quorum);
    // At once, or from the background if node 0 answered too slowly (a loaded machine); the
    // grant would otherwise stay for its TTL, 30 s.
    EXPECT_TRUE(eventually(
        [&] {
            return c[0].raw().cmd({"EXISTS", "job"}).integer == 0;
        },
        5s))
        << "the failed attempt kept node 0";
    slow1.stall_replies(false);
    slow2.stall_replies(false);
}

TEST(RedlockPrimitives, AReentrysGiveBackThatRanUnheardIsNotSentAgain) {
    // An owner re-enters: node 0 grants and is heard, nodes 1 and 2 are not, so the round
    // fails and gives node 0's grant back. That give-back runs, and its answer is lost. Its
    // bound is the re-entry's fence, the outer holding's too: sent again, it would count the
    // outer hold down on node 0 as well.
    RedlockNodes c(3);
    TcpProxy slow0(c[0].port()), slow1(c[1].port()), slow2(c[2].port());
    auto a = deadbolt::Client::connect(deadbolt::test::redlock_url(
        {slow0.port(), slow1.port(), slow2.port()}, "command_timeout=1s"));
    auto m = a.reentrant_mutex("job");
    m.lock();
    m.lock();
    m.unlock();
    for (int i = 0; i < 3; ++i)  // the give-back's script too: no NOSCRIPT round trip below
        c[i].raw().cmd({"SCRIPT", "LOAD", deadbolt::detail::reentrant_kind().give_back->source});
    const std::string owner = m.owner();  // this thread's: the default owner is per thread
    auto node0 = c[0].raw();
    const auto count = [&] { return node0.cmd({"HGET", "job", owner}).str; };
    ASSERT_EQ(count(), "1");
    slow1.stall_replies(true);
    slow2.stall_replies(true);
    const auto passed = slow0.replies_passed();
    std::thread losing([&] {
        // Once node 0's grant ran and its answer went through, what node 0 says next (the
        // give-back's answer, when the round ends at 1 s) is held back.
        (void)eventually([&] { return count() == "2" && slow0.replies_passed() > passed; }, 900ms);
        slow0.stall_replies(true);
    });
    EXPECT_EQ(code_of([&] { EXPECT_FALSE(m.try_lock()); }), errc::no_quorum);
    losing.join();
    ASSERT_GT(slow0.replies_held(), 0u) << "node 0's give-back was answered: nothing was lost";
    ASSERT_EQ(count(), "1") << "node 0's give-back did not run";
    slow0.stall_replies(false);
    slow1.stall_replies(false);
    slow2.stall_replies(false);
    std::this_thread::sleep_for(1500ms);  // a give-back left to the background goes by now
    EXPECT_EQ(count(), "1") << "the give-back was sent again and took the outer hold";
    EXPECT_EQ(m.hold_count(), 1u);
    m.unlock();
}

TEST(RedlockPrimitives, RWLockReadersShareAndExcludeTheWriter) {
    RedlockNodes c(3);
    auto a = deadbolt::Client::connect(c.url());
    auto b = deadbolt::Client::connect(c.url());
    auto w = deadbolt::Client::connect(c.url());
    auto ra = a.rwlock("doc");
    auto rb = b.rwlock("doc");
    auto rw = w.rwlock("doc");
    ASSERT_TRUE(ra.try_lock_shared());
    ASSERT_TRUE(rb.try_lock_shared());
    EXPECT_EQ(ra.shared_lease().fence(), 0u);
    EXPECT_FALSE(rw.try_lock());
    c[0].stop();  // a minority down changes nothing
    ra.unlock_shared();
    EXPECT_FALSE(rw.try_lock()) << "a writer got in beside a reader";
    rb.unlock_shared();
    ASSERT_TRUE(rw.try_lock());
    EXPECT_GT(rw.lease().fence(), 0u);
    EXPECT_FALSE(ra.try_lock_shared()) << "a reader got in beside the writer";
    rw.unlock();
    EXPECT_TRUE(ra.try_lock_shared()) << "the writer's claim outlived its wait";
}

TEST(RedlockPrimitives, RWLockWriterWaitsForTheLastReader) {
    RedlockNodes c(3);
    auto a = deadbolt::Client::connect(c.url());
    auto w = deadbolt::Client::connect(c.url());
    auto ra = a.rwlock("doc");
    auto rw = w.rwlock("doc");
    ASSERT_TRUE(ra.try_lock_shared());
    std::atomic<bool> writing{false};
    std::thread writer([&] {
        rw.lock();  // woken by the reader's release message, not by polling
        writing = true;
        rw.unlock();
    });
    std::this_thread::sleep_for(100ms);
    EXPECT_FALSE(writing.load());
    // The waiting writer's claim holds new readers back.
    auto b = deadbolt::Client::connect(c.url());
    EXPECT_FALSE(b.rwlock("doc").try_lock_shared());
    ra.unlock_shared();
    writer.join();
    EXPECT_TRUE(writing.load());
}

TEST(RedlockPrimitives, AcquireAllTakesEveryNameWithAFencePerNameOrdered) {
    RedlockNodes c(3);
    // Name b's last agreed fence is far ahead (on a majority, as round 2 leaves it): its
    // fence must come out above it, and round 2 must carry it to the third node.
    for (std::size_t i : {0U, 1U}) c[i].raw().cmd({"SET", "{b}:fence", kAhead, "PX", "600000"});
    auto x = deadbolt::Client::connect(c.url());
    auto y = deadbolt::Client::connect(c.url());
    std::uint64_t fb = 0;
    {
        auto l = x.acquire_all({"a", "b"});
        auto f = l.fences();
        ASSERT_EQ(f.size(), 2u);
        EXPECT_EQ(f[0].name, "a");
        EXPECT_LT(f[0].fence, 5000000000000000ULL);
        EXPECT_GT(f[1].fence, 5000000000000000ULL);
        fb = f[1].fence;
        EXPECT_TRUE(eventually([&] { return c.holding("a", l.token()) == 3; }));
        EXPECT_TRUE(eventually([&] { return c.holding("b", l.token()) == 3; }));
        EXPECT_FALSE(y.mutex("b").try_lock()) << "a Mutex got a name a MultiLock holds";
    }
    EXPECT_TRUE(eventually([&] { return c.answering({"TYPE", "a"}, "none") == 3; }));
    c[0].stop();  // y reads b's counter on nodes 1 and 2 only
    auto lb = y.acquire("b");
    EXPECT_GT(lb.fence(), fb);
}

TEST(RedlockPrimitives, AcquireAllFailsWholeWhenOneNameIsHeld) {
    RedlockNodes c(3);
    auto x = deadbolt::Client::connect(c.url());
    auto y = deadbolt::Client::connect(c.url());
    auto held = y.acquire("b");
    EXPECT_EQ(code_of([&] { x.acquire_all({"a", "b"}, {}, no_wait()); }), errc::not_acquired);
    EXPECT_EQ(c.answering({"TYPE", "a"}, "none"), 3) << "a failed MultiLock kept a name";
    EXPECT_EQ(c.holding("b", held.token()), 3);
    // acquire_all waits for the holder's release message.
    std::thread release([&] {
        std::this_thread::sleep_for(100ms);
        held.release();
    });
    auto l = x.acquire_all({"a", "b"}, {}, wait_for(10s));
    release.join();
    // Woken by the first node's message, it may reach another node before the release does:
    // a majority is what it needs.
    EXPECT_GE(c.holding("a", l.token()), 2);
    EXPECT_GE(c.holding("b", l.token()), 2);
}

TEST(RedlockPrimitives, ElectionLeaderIsTheMajoritysAndTermsRise) {
    RedlockNodes c(3);
    auto a = deadbolt::Client::connect(c.url());
    auto b = deadbolt::Client::connect(c.url());
    auto w = deadbolt::Client::connect(c.url());
    auto ea = a.election("primary");
    auto eb = b.election("primary");
    auto ew = w.election("primary");
    EXPECT_FALSE(ew.leader().elected);
    const auto term = ea.campaign("node-a").fence();
    // campaign() returns once a majority agreed; the third node may take the term a moment
    // later (a script it had to load first). Stopping a node of that majority before then
    // leaves no majority to read, as Redlock promises.
    ASSERT_TRUE(eventually([&] {
        return c.answering({"HGET", "primary", "term"}, std::to_string(term)) == 3;
    })) << "a node never took the agreed term";
    c[2].stop();  // reads, proclamations and the next election need only a majority
    auto seen = ew.leader();
    EXPECT_TRUE(seen.elected);
    EXPECT_EQ(seen.value, "node-a");
    EXPECT_EQ(seen.term, term) << "the term is the agreed fence, not one node's counter";
    ea.proclaim("node-a:v2");
    seen = ew.observe(seen, wait_for(5s));
    EXPECT_EQ(seen.value, "node-a:v2");
    EXPECT_EQ(code_of([&] { eb.campaign("node-b", no_wait()); }), errc::not_acquired);
    std::thread candidate([&] { eb.campaign("node-b", wait_for(10s)); });
    ea.resign();
    candidate.join();
    ASSERT_TRUE(eb.leading());
    auto next = ew.leader();
    EXPECT_EQ(next.value, "node-b");
    EXPECT_GT(next.term, term);
    EXPECT_EQ(next.term, eb.term().fence());
    // A deposed leader cannot proclaim over the new one.
    EXPECT_EQ(code_of([&] { ea.proclaim("stale"); }), errc::not_owner);
    EXPECT_EQ(ew.leader().value, "node-b");
}

TEST(RedlockPrimitives, AnObserverSeesTheNewLeaderWhenTheMessageNodeIsDown) {
    RedlockNodes c(3);
    c[0].stop();  // release and election messages come from the first node
    auto a = deadbolt::Client::connect(c.url());
    auto w = deadbolt::Client::connect(c.url());
    auto ea = a.election("primary");
    auto ew = w.election("primary");
    auto nobody = ew.leader();
    ASSERT_FALSE(nobody.elected);
    std::thread candidate([&] {
        std::this_thread::sleep_for(100ms);
        ea.campaign("node-a");
    });
    auto seen = ew.observe(nobody, wait_for(10s));
    candidate.join();
    EXPECT_TRUE(seen.elected);
    EXPECT_EQ(seen.value, "node-a");
}

// Observers hear of changes from the first node only. When it applies a change before the
// others (a slower link, a script they must load first), its message comes before a majority
// agrees, and the others announce the change only to their own subscribers: the observer must
// look again, not sleep until the term's expiry.
TEST(RedlockPrimitives, AnObserverSeesAChangeTheFirstNodeAnnouncedBeforeTheMajorityHadIt) {
    RedlockNodes c(3);
    TcpProxy slow1(c[1].port()), slow2(c[2].port());
    auto a = deadbolt::Client::connect(
        deadbolt::test::redlock_url({c[0].port(), slow1.port(), slow2.port()}));
    auto w = deadbolt::Client::connect(c.url());
    auto ea = a.election("primary", {.ttl = 60s});
    auto ew = w.election("primary");
    ea.campaign("first");
    auto value_on = [&](const std::string& v) {
        return c.answering({"HGET", "primary", "value"}, v);
    };
    ASSERT_TRUE(eventually([&] { return value_on("first") == 3; }));
    auto seen = ew.leader();
    ASSERT_EQ(seen.value, "first");
    slow1.stall_requests(true);
    slow2.stall_requests(true);
    std::thread changer([&] { ea.proclaim("second"); });
    std::thread resume([&] {
        // Node 0 has announced "second"; nodes 1 and 2 still say "first" for a while.
        EXPECT_TRUE(eventually([&] { return value_on("second") == 1; }));
        std::this_thread::sleep_for(300ms);
        slow1.stall_requests(false);
        slow2.stall_requests(false);
    });
    auto deadline = std::chrono::steady_clock::now() + 20s;
    auto now = ew.observe(seen, {.deadline = deadline});
    EXPECT_LT(std::chrono::steady_clock::now(), deadline) << "the observer slept past the change";
    resume.join();
    changer.join();
    EXPECT_EQ(now.value, "second");
}
