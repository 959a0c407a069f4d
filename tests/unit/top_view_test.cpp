// deadbolt top's picture (cli/top_view): the events it tells between two listings and the
// screen it draws, without a terminal or an engine.
#include "top_view.hpp"

#include <gtest/gtest.h>

#include <algorithm>

using namespace std::chrono_literals;
using deadbolt::Holder;
using deadbolt::ListedLock;
using deadbolt::LockStatus;
using deadbolt::cli::top_changes;
using deadbolt::cli::top_lines;
using deadbolt::cli::TopEvent;
using deadbolt::cli::TopScreen;
using deadbolt::cli::TopSort;

namespace {

const auto t0 = std::chrono::system_clock::time_point(std::chrono::hours(24 * 365 * 56));

ListedLock mutex(const std::string& name, int pid, std::uint64_t fence,
                 std::chrono::milliseconds ttl = 30s, int waiters = 0) {
    LockStatus s;
    s.held = true;
    s.kind = "mutex";
    s.holders = 1;
    s.ttl = ttl;
    s.last_fence = fence;
    s.waiters = waiters;
    Holder h;
    h.host = "web-1";
    h.pid = pid;
    h.since = t0 - std::chrono::seconds(pid);  // the larger the pid, the older the holding
    h.ttl = ttl;
    s.held_by.push_back(h);
    return {name, s};
}

ListedLock permits(const std::string& name, int held) {
    LockStatus s;
    s.held = held > 0;
    s.kind = "semaphore";
    s.holders = held;
    s.permits = 5;
    s.ttl = 30s;
    return {name, s};
}

std::vector<std::string> said(const std::vector<TopEvent>& events) {
    std::vector<std::string> out;
    for (const auto& e : events) out.push_back(e.what + " " + e.name);
    return out;
}

bool shows(const std::vector<std::string>& lines, const std::string& text) {
    return std::any_of(lines.begin(), lines.end(),
                       [&](const std::string& l) { return l.find(text) != std::string::npos; });
}

std::size_t row_of(const std::vector<std::string>& lines, const std::string& name) {
    for (std::size_t i = 0; i < lines.size(); ++i)
        if (lines[i].rfind(name + " ", 0) == 0) return i;
    return lines.size();
}

}  // namespace

TEST(TopChanges, AGrantAReleaseAndAnExpiryAreToldApart) {
    auto events =
        top_changes({mutex("a", 1, 10), mutex("b", 2, 20, 500ms)}, {mutex("c", 3, 30)}, t0, 1s);
    EXPECT_EQ(said(events), (std::vector<std::string>{"released a", "expired b", "granted c"}));
    EXPECT_NE(events[2].detail.find("web-1 pid 3"), std::string::npos) << events[2].detail;
    EXPECT_NE(events[2].detail.find("fence 30"), std::string::npos) << events[2].detail;
}

TEST(TopChanges, ANewHolderBetweenTwoListingsIsAGrantAndTheSameHolderIsNothing) {
    EXPECT_TRUE(top_changes({mutex("a", 1, 10)}, {mutex("a", 1, 10, 20s)}, t0, 1s).empty())
        << "a renewal (less TTL, same holding) is no event";
    auto events = top_changes({mutex("a", 1, 10)}, {mutex("a", 2, 11)}, t0, 1s);
    ASSERT_EQ(said(events), (std::vector<std::string>{"granted a"}));
    EXPECT_NE(events[0].detail.find("was web-1 pid 1"), std::string::npos) << events[0].detail;
}

TEST(TopChanges, PermitsAreCountedUpAndDown) {
    auto up = top_changes({permits("pool", 1)}, {permits("pool", 3)}, t0, 1s);
    ASSERT_EQ(said(up), (std::vector<std::string>{"granted pool"}));
    EXPECT_NE(up[0].detail.find("2 more, 3 held"), std::string::npos) << up[0].detail;
    auto down = top_changes({permits("pool", 3)}, {permits("pool", 2)}, t0, 1s);
    ASSERT_EQ(said(down), (std::vector<std::string>{"released pool"}));
    EXPECT_EQ(said(top_changes({permits("pool", 2)}, {permits("pool", 0)}, t0, 1s)),
              (std::vector<std::string>{"released pool"}))
        << "a semaphore whose last permit went is released";
}

TEST(TopLines, EveryColumnOfAHeldLockIsShown) {
    TopScreen screen;
    screen.title = "redis '*'";
    auto lines = top_lines({mutex("orders:42", 4121, 77, 12s, 3)}, {}, screen, t0);
    ASSERT_LT(row_of(lines, "orders:42"), lines.size());
    const auto& row = lines[row_of(lines, "orders:42")];
    for (const char* cell : {"mutex", "web-1 pid 4121", "1h08m", "77", "12.0s", "3"})
        EXPECT_NE(row.find(cell), std::string::npos) << cell << " in " << row;
    EXPECT_TRUE(shows(lines, "1 locks, 3 waiting"));
}

TEST(TopLines, EachSortPutsItsRowFirst) {
    // a: youngest, fewest waiters, longest TTL; b: oldest; c: most waiters; d: shortest TTL.
    std::vector<ListedLock> locks{mutex("a", 1, 1, 50s, 0), mutex("b", 900, 2, 40s, 1),
                                  mutex("c", 2, 3, 30s, 9), mutex("d", 3, 4, 3s, 2)};
    TopScreen screen;
    for (auto [sort, first] : {std::pair{TopSort::name, "a"}, std::pair{TopSort::age, "b"},
                               std::pair{TopSort::waiters, "c"}, std::pair{TopSort::ttl, "d"}}) {
        screen.sort = sort;
        auto lines = top_lines(locks, {}, screen, t0);
        for (const char* other : {"a", "b", "c", "d"}) {
            if (std::string(other) == first) continue;
            EXPECT_LT(row_of(lines, first), row_of(lines, other))
                << deadbolt::cli::sort_name(sort) << ": " << first << " before " << other;
        }
    }
}

TEST(TopLines, ASmallScreenKeepsTheLatestEventsAndSaysHowManyRowsItCut) {
    std::vector<ListedLock> locks;
    for (int i = 0; i < 50; ++i) locks.push_back(mutex("lock-" + std::to_string(100 + i), i, i));
    std::deque<TopEvent> events;
    for (int i = 0; i < 30; ++i) events.push_back({t0, "granted", "e" + std::to_string(i), ""});
    TopScreen screen;
    screen.rows = 20;
    screen.cols = 50;
    auto lines = top_lines(locks, events, screen, t0);
    EXPECT_LE(lines.size(), 20u);
    for (const auto& l : lines) EXPECT_LE(l.size(), 50u) << l;
    EXPECT_TRUE(shows(lines, "more")) << "the rows that did not fit are counted";
    EXPECT_TRUE(shows(lines, "e29")) << "the latest event is shown";
    EXPECT_FALSE(shows(lines, "e0 ")) << "the oldest is not";
}

TEST(TopLines, AFailedListingIsSaidAboveTheTable) {
    TopScreen screen;
    screen.error = "connection refused";
    EXPECT_TRUE(
        shows(top_lines({}, {}, screen, t0), "the last listing failed: connection refused"));
}

TEST(TopChanges, ReadersGivingWayToAWriterIsAGrant) {
    auto readers = permits("doc", 2);
    readers.status.kind = "readers";
    auto events = top_changes({readers}, {mutex("doc", 7, 40)}, t0, 1s);
    ASSERT_EQ(said(events), (std::vector<std::string>{"granted doc"}));
    EXPECT_NE(events[0].detail.find("as mutex (was readers)"), std::string::npos)
        << events[0].detail;
}

TEST(TopLines, AWholeFrameKeepsEveryLockAndEventUncut) {
    std::vector<ListedLock> locks;
    for (int i = 0; i < 50; ++i)
        locks.push_back(mutex(std::string(70, 'n') + std::to_string(100 + i), i, i));
    std::deque<TopEvent> events;
    for (int i = 0; i < 30; ++i) events.push_back({t0, "granted", "e" + std::to_string(i), ""});
    TopScreen screen;
    screen.whole = true;
    auto lines = top_lines(locks, events, screen, t0);
    EXPECT_FALSE(shows(lines, "more")) << "nothing is cut from a whole frame";
    EXPECT_TRUE(shows(lines, std::string(70, 'n') + "149")) << "long names are whole";
    EXPECT_TRUE(shows(lines, "e0 ")) << "the oldest event too";
    EXPECT_TRUE(shows(lines, "e29"));
}

TEST(TopLines, ControlCharactersFromTheEngineCannotReachTheTerminal) {
    auto l = mutex("evil\x1b[2Jname\n", 1, 1);
    l.status.held_by.front().host = "host\x07";
    auto lines = top_lines({l}, {}, TopScreen{}, t0);
    for (const auto& line : lines)
        for (char c : line) EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20) << line;
    EXPECT_TRUE(shows(lines, "evil?[2Jname?")) << "shown, made harmless";
}
