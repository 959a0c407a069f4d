// A background thread ended from itself is adopted, not detached: the process's exit waits
// for it, so it never runs on while the statics it uses are destroyed.
#include "core/background.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <future>
#include <memory>
#include <thread>

namespace deadbolt::detail {
namespace {

// In a child process: a thread that ends its own Background, then works on for a while and
// writes to fd; the child exits at once after that. Returns what the parent read.
std::string what_an_adopted_thread_wrote_before_exit() {
    int fds[2];
    EXPECT_EQ(pipe(fds), 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        struct Owner {
            Background thread;
        };
        auto owner = std::make_shared<Owner>();
        std::promise<void> assigned;
        std::promise<void> adopted;
        auto assigned_f = assigned.get_future().share();
        owner->thread = Background([owner, assigned_f, &adopted, fd = fds[1]]() mutable {
            assigned_f.wait();
            owner->thread.end();  // from the thread itself: adopted
            owner.reset();
            adopted.set_value();
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            (void)!write(fd, "x", 1);
        });
        assigned.set_value();
        adopted.get_future().wait();
        std::exit(0);  // the exit handlers run: the adopted thread must be joined first
    }
    close(fds[1]);
    int status = 0;
    waitpid(pid, &status, 0);
    char buf[8] = {};
    auto n = read(fds[0], buf, sizeof buf);
    close(fds[0]);
    EXPECT_TRUE(WIFEXITED(status));
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

TEST(Background, AThreadEndedFromItselfFinishesBeforeTheProcessExits) {
    EXPECT_EQ(what_an_adopted_thread_wrote_before_exit(), "x");
}

TEST(Background, EndJoinsFromAnotherThread) {
    std::atomic<bool> done{false};
    Background b([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        done = true;
    });
    EXPECT_TRUE(b.running());
    b.end();
    EXPECT_TRUE(done);
    EXPECT_FALSE(b.running());
}

}  // namespace
}  // namespace deadbolt::detail
