// The torture checker must catch what it claims to catch, from histories alone.
#include <gtest/gtest.h>

#include <sstream>

#include "checker.hpp"
#include "report.hpp"

using namespace deadbolt::torture;
using K = Event::Kind;

namespace {

constexpr std::int64_t ms = 1000000;

Event ok(int w, std::int64_t t, std::uint64_t fence, std::int64_t valid_until = kForever) {
    return {K::acquire_ok, w, t, fence, valid_until, true, 0, t - 1};
}
Event rel(int w, std::int64_t t) {
    return {K::release, w, t};
}
Event write(int w, std::int64_t t, std::uint64_t fence, bool accepted = true) {
    return {K::write, w, t, fence, kForever, accepted, 0, t - 1};
}

}  // namespace

TEST(TortureChecker, CleanHandoffsHaveNoViolations) {
    std::vector<Event> h = {ok(1, 0, 10),       write(1, 5 * ms, 10),  rel(1, 10 * ms),
                            ok(2, 11 * ms, 11), write(2, 15 * ms, 11), rel(2, 20 * ms)};
    auto v = check(h, 2, true);
    EXPECT_EQ(v.acquisitions, 2);
    EXPECT_EQ(v.overlaps, 0);
    EXPECT_EQ(v.stale_writes, 0);
    EXPECT_EQ(v.fence_regressions, 0);
    EXPECT_EQ(v.lost_updates, 0);
    EXPECT_EQ(v.max_gap_ns, 11 * ms);  // from one acquisition to the next
}

TEST(TortureChecker, OverlapIsCaught) {
    // Worker 2 acquires while worker 1 (no validity bound: a naive lock) has not released.
    std::vector<Event> h = {ok(1, 0, 1), ok(2, 5 * ms, 2), rel(1, 10 * ms), rel(2, 20 * ms)};
    auto v = check(h, 0, false);
    EXPECT_EQ(v.overlaps, 1);
    ASSERT_FALSE(v.examples.empty());
    EXPECT_NE(v.examples[0].find("worker 2 began holding while worker 1"), std::string::npos);
}

TEST(TortureChecker, ValidityEndsAHolding) {
    // Worker 1 was paused past its lease: its holding ends at valid_until, not at release.
    std::vector<Event> h = {ok(1, 0, 1, 4 * ms), ok(2, 5 * ms, 2), rel(1, 30 * ms),
                            rel(2, 40 * ms)};
    EXPECT_EQ(check(h, 0, true).overlaps, 0);
    auto iv = holdings(h);
    ASSERT_EQ(iv.size(), 2u);
    EXPECT_EQ(iv[0].end, 4 * ms);
}

TEST(TortureChecker, StaleFencedWriteIsCaught) {
    // The paused worker 1 writes with fence 1 after fence 2 was accepted.
    std::vector<Event> h = {ok(1, 0, 1, 4 * ms), ok(2, 5 * ms, 2),           write(2, 6 * ms, 2),
                            rel(2, 7 * ms),      write(1, 30 * ms, 1, true), rel(1, 31 * ms)};
    auto v = check(h, 2, true);
    EXPECT_EQ(v.stale_writes, 1);
    // Rejected by the resource: not a violation.
    h[4].accepted = false;
    EXPECT_EQ(check(h, 1, true).stale_writes, 0);
}

TEST(TortureChecker, FenceRegressionAndLostUpdates) {
    std::vector<Event> h = {ok(1, 0, 5),      write(1, 1 * ms, 5), rel(1, 2 * ms),
                            ok(2, 3 * ms, 5), write(2, 4 * ms, 5), rel(2, 5 * ms)};
    auto v = check(h, 1, true);
    EXPECT_EQ(v.fence_regressions, 1);
    EXPECT_EQ(v.accepted_writes, 2);
    EXPECT_EQ(v.lost_updates, 1);
}

TEST(TortureChecker, UnreleasedHolderCountsUntilItsValidity) {
    // Worker 1 was killed holding a TTL lock; worker 2 starts after the validity: no overlap.
    std::vector<Event> h = {ok(1, 0, 1, 10 * ms), ok(2, 12 * ms, 2), rel(2, 13 * ms)};
    EXPECT_EQ(check(h, 0, true).overlaps, 0);
    // Without a validity (no TTL), the killed holder holds forever: a later holder overlaps.
    h[0].valid_until = kForever;
    EXPECT_EQ(check(h, 0, false).overlaps, 1);
}

TEST(TortureChecker, HistoryRoundTripsThroughJsonLines) {
    std::vector<Event> h = {ok(3, 123, 1763790000123456ULL, 999),
                            write(3, 200, 1763790000123456ULL, false),
                            rel(3, 300),
                            {K::acquire_unknown, 4, 400}};
    std::stringstream s;
    for (auto& e : h) s << to_json(e) << "\n";
    auto back = read_history(s);
    ASSERT_EQ(back.size(), h.size());
    EXPECT_EQ(back[0].fence, 1763790000123456ULL);
    EXPECT_EQ(back[0].valid_until, 999);
    EXPECT_FALSE(back[1].accepted);
    EXPECT_EQ(back[3].kind, K::acquire_unknown);
    std::stringstream bad("{\"e\":\"acquire_ok\",\"w\":1,\"t\":5}\nnot json\n");
    EXPECT_THROW(read_history(bad), std::runtime_error);
}

TEST(TortureChecker, ReleaseCarriesTheRenewedValidity) {
    // Acquired with validity 4 ms, renewed to 30 ms, released at 20 ms: held until 20 ms.
    Event r = rel(1, 20 * ms);
    r.valid_until = 30 * ms;
    std::vector<Event> h = {ok(1, 0, 1, 4 * ms), r, ok(2, 10 * ms, 2), rel(2, 40 * ms)};
    EXPECT_EQ(check(h, 0, true).overlaps, 1);  // worker 2 began while 1's renewed lease ran
    r.valid_until = 8 * ms;                    // paused: renewals stopped at 8 ms
    h[1] = r;
    EXPECT_EQ(check(h, 0, true).overlaps, 0);
}

TEST(TortureChecker, WritesInFlightTogetherAreNotCalledStale) {
    // Fence 1 was sent before fence 2 answered, so the server may have run it first.
    Event a = write(1, 30 * ms, 1);
    a.invoked = 5 * ms;
    std::vector<Event> h = {write(2, 10 * ms, 2), a};
    EXPECT_EQ(check(h, 2, true).stale_writes, 0);
    a.invoked = 11 * ms;  // sent after fence 2 was accepted: stale for sure
    h[1] = a;
    EXPECT_EQ(check(h, 2, true).stale_writes, 1);
}

TEST(TortureChecker, KilledHolderReplacedUnderTheSameIdStillCounts) {
    // Worker 1 is killed holding a naive lock (no validity); its replacement, also worker 1,
    // acquires later. Worker 2 acquired in between: that overlaps the killed holding.
    std::vector<Event> h = {ok(1, 0, 0), ok(2, 5 * ms, 0), rel(2, 6 * ms), ok(1, 10 * ms, 0),
                            rel(1, 11 * ms)};
    auto v = check(h, 0, false);
    EXPECT_EQ(holdings(h).size(), 3u);
    EXPECT_GE(v.overlaps, 1);
    EXPECT_EQ(v.last_acquisition_ns, 10 * ms);
}

TEST(TortureChecker, GrantsAreOrderedOnlyWhenOneAnsweredBeforeTheOtherWasSent) {
    // Worker 1 sent its acquire at 1 ms and got fence 5, but was paused before recording it at
    // 20 ms; worker 2 meanwhile got fence 6. Record order would invent a regression and, by
    // then, worker 1's validity had ended: a late grant, not a holding (no overlap either).
    std::vector<Event> h = {ok(2, 10 * ms, 6, 50 * ms), ok(1, 20 * ms, 5, 8 * ms), rel(2, 30 * ms),
                            rel(1, 40 * ms)};
    h[1].invoked = 1 * ms;
    auto v = check(h, 0, true);
    EXPECT_EQ(v.late_grants, 1);
    EXPECT_EQ(v.fence_regressions, 0);
    EXPECT_EQ(v.overlaps, 0);
    // Sent after worker 2's grant was answered, fence 5 is a regression.
    h[1].invoked = 11 * ms;
    v = check(h, 0, true);
    EXPECT_EQ(v.fence_regressions, 1);
}

TEST(TortureChecker, ASemaphoreMayHaveCapacityHoldersButNotOneMore) {
    // Three holders at once is what a semaphore of 3 is for; a fourth while they hold is not.
    std::vector<Event> h = {ok(1, 0, 0),       ok(2, 1 * ms, 0),  ok(3, 2 * ms, 0), rel(1, 10 * ms),
                            ok(4, 11 * ms, 0), ok(5, 12 * ms, 0), rel(2, 20 * ms),  rel(3, 20 * ms),
                            rel(4, 20 * ms),   rel(5, 20 * ms)};
    EXPECT_EQ(check(h, 0, false, 3).overlaps, 1);  // worker 5 joined 2, 3 and 4
    EXPECT_EQ(check(h, 0, false, 4).overlaps, 0);
    EXPECT_EQ(check(h, 0, false, 4).peak_holders, 4);
    auto v = check(h, 0, false, 3);
    ASSERT_FALSE(v.examples.empty());
    EXPECT_NE(v.examples[0].find("worker 5 began holding while 3 holders"), std::string::npos)
        << v.examples[0];
    EXPECT_EQ(check(h, 0, false, 1).overlaps, 4);
}

TEST(TortureChecker, ARunInWhichNobodyHeldTheLockFailsItProvedNothing) {
    // Every try refused (a TTL the engine cannot keep): no violation, and nothing tested.
    RunFacts f;
    f.lock = "deadbolt@memcached";
    f.mode = "plain";
    f.nemesis = "restart";
    f.expect = "auto";
    f.promise.fences = true;
    std::vector<Event> none = {{K::acquire_invoke, 1, 0}, {K::acquire_fail, 1, ms}};
    EXPECT_FALSE(judge(f, check(none, 1, false))["pass"].get<bool>());
    std::vector<Event> held = {ok(1, 0, 10), rel(1, 10 * ms)};
    EXPECT_TRUE(judge(f, check(held, 1, false))["pass"].get<bool>());
}
