// deadbolt's file locks (file://) on this machine: the kernel frees a dead holder's lock at
// once, a waiter sleeps until a close and never polls, fences survive new clients (they live
// in the file, fsync'd), force-unlock replaces the file and the holder hears of it, bad URLs
// and directories are refused with the reason, and the CLI keeps flock(1)'s habits.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <future>
#include <thread>

#include "backends/files/names.hpp"
#include "backends/files/url.hpp"
#include "cli_run.hpp"
#include "deadbolt/deadbolt.hpp"
#include "eventually.hpp"

using namespace std::chrono_literals;
using deadbolt::Client;
using deadbolt::test::eventually;
using Clock = std::chrono::steady_clock;

namespace {

std::string fresh_dir() {
    char tmpl[] = "/tmp/deadbolt-filetest-XXXXXX";
    return ::mkdtemp(tmpl);
}

TEST(FileLocks, ADeadHoldersLockIsFreedByTheKernelAtOnce) {
    const auto dir = fresh_dir();
    pid_t child = ::fork();
    if (child == 0) {
        auto c = Client::connect("file://" + dir);
        auto held = c.acquire("job", {.ttl = 1h});
        std::ofstream(dir + "/held") << held.fence();
        ::pause();
        ::_exit(0);
    }
    ASSERT_TRUE(eventually([&] { return std::ifstream(dir + "/held").good(); }, 10s));
    auto c = Client::connect("file://" + dir);
    EXPECT_THROW(c.acquire("job", {}, {.deadline = Clock::now()}), deadbolt::LockError);
    std::thread killer([&] {
        std::this_thread::sleep_for(300ms);
        ::kill(child, SIGKILL);
    });
    auto deadline = Clock::now() + 20s;
    auto got = c.acquire("job", {}, {.deadline = deadline});  // the holder's TTL was an hour
    EXPECT_LT(Clock::now(), deadline);
    killer.join();
    ::waitpid(child, nullptr, 0);
    EXPECT_EQ(got.fence(), 2u) << "fences go on from the dead holder's";
}

TEST(FileLocks, AWaiterSleepsUntilTheReleaseAndLooksNoMoreThanTwice) {
    const auto dir = fresh_dir();
    auto a = Client::connect("file://" + dir), b = Client::connect("file://" + dir);
    auto held = a.acquire("sleep");
    std::atomic<int> looks{0};
    std::thread releaser([&] {
        std::this_thread::sleep_for(1500ms);
        held.release();
    });
    auto got = b.acquire(
        "sleep", {},
        {.deadline = Clock::now() + 20s, .on_wait = [&](const deadbolt::WaitInfo&) { ++looks; }});
    releaser.join();
    EXPECT_TRUE(got.valid());
    EXPECT_LE(looks.load(), 2) << "a waiter looked again without a close to wake it: polling";
}

TEST(FileLocks, FencesLiveInTheFileAndSurviveNewClients) {
    const auto dir = fresh_dir();
    std::uint64_t last = 0;
    for (int i = 0; i < 3; ++i) {
        auto c = Client::connect("file://" + dir);
        auto l = c.acquire("fences");
        EXPECT_EQ(l.fence(), last + 1);
        last = l.fence();
    }
    std::ifstream f(dir + "/" + deadbolt::detail::lock_file_name("", "fences"));
    std::uint64_t in_file = 0;
    f >> in_file;
    EXPECT_EQ(in_file, last);
}

TEST(FileLocks, ForceUnlockReplacesTheFileTheHolderHearsAndFencesGoOn) {
    const auto dir = fresh_dir();
    auto a = Client::connect("file://" + dir), b = Client::connect("file://" + dir);
    std::atomic<int> lost{0};
    auto held = a.acquire(
        "forced", {.ttl = 3s, .on_lost = [&](std::string_view, std::error_code) { ++lost; }});
    auto st = b.status("forced");
    EXPECT_TRUE(st.held);
    ASSERT_EQ(st.held_by.size(), 1u);
    EXPECT_EQ(st.held_by.front().pid, ::getpid());
    EXPECT_EQ(b.force_unlock("forced"), "mutex");
    auto next = b.acquire("forced", {}, {.deadline = Clock::now()});
    EXPECT_GT(next.fence(), held.fence());
    EXPECT_TRUE(eventually([&] { return lost.load() == 1; }, 10s)) << "at its next renewal";
    EXPECT_THROW(held.release(), deadbolt::LockError);
    EXPECT_TRUE(b.status("forced").held) << "the old holder's release freed the new one's lock";
}

TEST(FileLocks, ReadersShareWritersExcludeAndSemaphoreSlotsCount) {
    const auto dir = fresh_dir();
    auto a = Client::connect("file://" + dir), b = Client::connect("file://" + dir);
    auto ra = a.rwlock("doc"), rb = b.rwlock("doc");
    ra.lock_shared();
    EXPECT_TRUE(rb.try_lock_shared());
    EXPECT_FALSE(rb.try_lock_for(0ms));
    rb.unlock_shared();
    ra.unlock_shared();
    EXPECT_TRUE(rb.try_lock_for(0ms));
    rb.unlock();
    auto s = a.semaphore("slots", 2);
    s.acquire();
    s.acquire();
    EXPECT_FALSE(b.semaphore("slots", 2).try_acquire());
    s.release();
    EXPECT_TRUE(b.semaphore("slots", 2).try_acquire());
}

TEST(FileLocks, BadUrlsAndDirectoriesAreRefusedWithTheReason) {
    struct Case {
        std::string url;
        const char* says;
    } cases[] = {
        {"file://relative/dir", "absolute path"},
        {"file://otherhost/dir", "absolute path"},
        {"file:///tmp/x?user=bob", "no users or passwords"},
        {"file:///tmp/x?ttl=3", "unknown file URL option"},
        {"file:///etc/hostname", "is not a directory"},
    };
    for (const auto& c : cases) {
        try {
            (void)Client::connect(c.url);
            ADD_FAILURE() << c.url << " was taken";
        } catch (const deadbolt::UsageError& e) {
            EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos)
                << c.url << ": " << e.what();
        }
    }
    auto c = Client::connect("file://" + fresh_dir() + "/made/on/demand");
    EXPECT_TRUE(c.acquire("x").valid());
    EXPECT_THROW((void)c.acquire("x", {.auto_renew = false}), deadbolt::UsageError);
    EXPECT_THROW((void)c.fair_mutex("x"), deadbolt::UsageError);
}

TEST(FileNames, NamesBecomeFileNamesAndComeBack) {
    using deadbolt::detail::lock_file_name;
    using deadbolt::detail::name_of_lock_file;
    EXPECT_EQ(lock_file_name("", "orders:42"), "orders:42.lock");
    for (const std::string& n : {std::string("a/b"), std::string(".hidden"), std::string("x\0y", 3),
                                 std::string("sp ace%")}) {
        auto f = lock_file_name("app-", n);
        EXPECT_EQ(f.find('/'), std::string::npos) << f;
        EXPECT_NE(f.front(), '.') << f;
        EXPECT_EQ(name_of_lock_file("app-", f), n) << f;
    }
    auto longest = lock_file_name("", std::string(300, 'n'));
    EXPECT_LE(longest.size(), 250u);
    EXPECT_EQ(name_of_lock_file("", "notes.txt"), std::nullopt);
    EXPECT_EQ(name_of_lock_file("app-", lock_file_name("other-", "x")), std::nullopt);
}

#ifdef DEADBOLT_CLI
TEST(FileCli, FlocksHabitsHoldAndAForceUnlockStopsTheCommand) {
    const auto dir = fresh_dir();
    const std::string url = "file://" + dir;
    auto cli = [&](std::vector<std::string> args) {
        return deadbolt::test::run_cli(url, std::move(args));
    };
    auto holder = std::async(std::launch::async, [&] {
        return cli({"run", "--ttl", "3s", "-x", "job", "-c", "sleep 30"});
    });
    ASSERT_TRUE(eventually(
        [&] {
            return cli({"status", "job"}).out.find("held") != std::string::npos;
        },
        10s));
    auto busy = cli({"run", "-n", "-E", "3", "job", "-c", "true"});
    EXPECT_EQ(busy.rc, 3) << busy.out;
    auto waited = cli({"run", "-w", "0.2", "job", "-c", "true"});
    EXPECT_EQ(waited.rc, 75) << waited.out;
    auto listed = cli({"list"});
    EXPECT_NE(listed.out.find("job"), std::string::npos) << listed.out;
    EXPECT_EQ(cli({"force-unlock", "job"}).rc, 0);
    auto r = holder.get();
    EXPECT_EQ(r.rc, 70) << "the holder's run heard its lock was taken: " << r.out;
    EXPECT_EQ(cli({"run", "-s", "job", "-c", "true"}).rc, 0);
}
#endif

}  // namespace
