// `deadbolt run` as a process among processes: its command never outlives it, and on a terminal
// it behaves as a shell's job (Ctrl-Z, fg).
#include <gtest/gtest.h>
#include <pty.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <poll.h>

#include <fstream>
#include <thread>

#include "eventually.hpp"
#include "redis_server.hpp"

extern char** environ;

using namespace std::chrono_literals;
using deadbolt::test::eventually;
using deadbolt::test::RedisServer;

namespace {

// Alive and not a zombie.
bool alive(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string skip, state;
    if (!(stat >> skip >> skip >> state)) return false;
    return state != "Z";
}

pid_t read_pid(const std::string& file) {
    pid_t pid = 0;
    std::ifstream(file) >> pid;
    return pid;
}

// Starts `deadbolt run NAME -- sh -c ...` whose shell and a background child write their pids.
pid_t start_run(const RedisServer& srv, const std::string& name) {
    std::string script = "echo $$ > " + srv.dir() + "/cmd.tmp; mv " + srv.dir() + "/cmd.tmp " +
                         srv.dir() + "/cmd.pid; sleep 300 & echo $! > " + srv.dir() +
                         "/bg.pid; wait";
    std::vector<std::string> args = {DEADBOLT_CLI, "run", "--ttl", "2s",  name,
                                     "--",         "sh",  "-c",    script};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::string url = "DEADBOLT_URL=" + srv.url();
    std::vector<char*> envp = {url.data(), nullptr};
    pid_t pid = -1;
    posix_spawn(&pid, DEADBOLT_CLI, nullptr, nullptr, argv.data(), envp.data());
    return pid;
}

}  // namespace

TEST(CliProcess, TheCommandDiesWithRunEvenByKill9) {
    RedisServer srv;
    pid_t run = start_run(srv, "k9");
    ASSERT_GT(run, 0);
    ASSERT_TRUE(eventually([&] { return read_pid(srv.dir() + "/bg.pid") > 0; }));
    pid_t cmd = read_pid(srv.dir() + "/cmd.pid");
    pid_t bg = read_pid(srv.dir() + "/bg.pid");
    ASSERT_TRUE(alive(cmd) && alive(bg));
    kill(run, SIGKILL);
    waitpid(run, nullptr, 0);
    // Without the guard both ran on for 300 s, and a second run got the lock beside them once
    // the TTL ended.
    EXPECT_TRUE(eventually([&] { return !alive(cmd) && !alive(bg); }, 5s));
}

TEST(CliProcess, QuitAndUserSignalsGoToTheCommandAndNothingIsLeftBehind) {
    for (int sig : {SIGQUIT, SIGUSR1, SIGUSR2}) {
        RedisServer srv;
        pid_t run = start_run(srv, "sig");
        ASSERT_GT(run, 0);
        ASSERT_TRUE(eventually([&] { return read_pid(srv.dir() + "/bg.pid") > 0; }));
        pid_t cmd = read_pid(srv.dir() + "/cmd.pid");
        pid_t bg = read_pid(srv.dir() + "/bg.pid");
        kill(run, sig);
        int status = 0;
        waitpid(run, &status, 0);
        // run survives the signal, hands it to the command, and reports how the command ended.
        ASSERT_TRUE(WIFEXITED(status)) << strsignal(sig) << " killed run itself";
        EXPECT_EQ(WEXITSTATUS(status), 128 + sig) << strsignal(sig);
        // The background sleep ignores SIGQUIT (an async list of sh): it is ended with the lock.
        EXPECT_FALSE(alive(cmd)) << strsignal(sig);
        EXPECT_FALSE(alive(bg)) << strsignal(sig);
        EXPECT_EQ(srv.raw().cmd({"EXISTS", "sig"}).integer, 0) << strsignal(sig);
    }
}

namespace {

// An interactive bash on a pseudo-terminal, as a person would have it.
class Terminal {
  public:
    explicit Terminal(const std::string& url) {
        pid_ = forkpty(&fd_, nullptr, nullptr, nullptr);
        if (pid_ == 0) {
            setenv("DEADBOLT_URL", url.c_str(), 1);
            setenv("PS1", "$ ", 1);
            execlp("bash", "bash", "--norc", "--noprofile", "-i", static_cast<char*>(nullptr));
            _exit(127);
        }
    }
    Terminal(const Terminal&) = delete;
    Terminal& operator=(const Terminal&) = delete;
    ~Terminal() {
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
        close(fd_);
    }
    void type(const std::string& keys) { (void)!write(fd_, keys.data(), keys.size()); }
    // The name of the program whose group the terminal has in its foreground ("" if none):
    // a Ctrl-Z typed before the command took the terminal would stop `run` alone, or nothing.
    std::string foreground() const {
        pid_t group = tcgetpgrp(fd_);
        if (group <= 0) return {};
        std::ifstream comm("/proc/" + std::to_string(group) + "/comm");
        std::string name;
        std::getline(comm, name);
        return name;
    }
    // Whether text appears on the screen (after what earlier calls consumed) within 30 s (a
    // bound, not a wait: under the sanitizers' load a resumed `run` once took over 10 s).
    bool shows(const std::string& text) {
        for (auto until = std::chrono::steady_clock::now() + 30s;
             std::chrono::steady_clock::now() < until;) {
            if (auto at = screen_.find(text); at != std::string::npos) {
                screen_.erase(0, at + text.size());
                return true;
            }
            pollfd p{fd_, POLLIN, 0};
            if (poll(&p, 1, 50) > 0) {
                char buf[4096];
                ssize_t n = read(fd_, buf, sizeof buf);
                if (n > 0) screen_.append(buf, static_cast<std::size_t>(n));
            }
        }
        return false;
    }
    const std::string& screen() const { return screen_; }

  private:
    int fd_ = -1;
    pid_t pid_ = -1;
    std::string screen_;
};

}  // namespace

TEST(CliProcess, CtrlZSuspendsRunWithItsCommandAndFgResumesBoth) {
    RedisServer srv;
    Terminal t(srv.url());
    ASSERT_TRUE(t.shows("$ "));
    t.type(std::string(DEADBOLT_CLI) + " run jobs -- sleep 30\n");
    ASSERT_TRUE(eventually([&] { return srv.raw().cmd({"EXISTS", "jobs"}).integer == 1; }));
    ASSERT_TRUE(eventually([&] { return t.foreground() == "sleep"; })) << t.foreground();
    t.type("\x1a");  // Ctrl-Z
    EXPECT_TRUE(t.shows("Stopped")) << t.screen();
    t.type("echo prompt-$((6*7))\n");
    EXPECT_TRUE(t.shows("prompt-42")) << "the shell never got its prompt back: " << t.screen();
    EXPECT_EQ(srv.raw().cmd({"EXISTS", "jobs"}).integer, 1);  // still held while suspended
    t.type("fg\n");
    ASSERT_TRUE(t.shows("sleep 30")) << t.screen();
    std::this_thread::sleep_for(300ms);
    t.type("\x03");  // Ctrl-C reaches the resumed command
    t.type("echo rc=$?\n");
    EXPECT_TRUE(t.shows("rc=130")) << t.screen();
    EXPECT_EQ(srv.raw().cmd({"EXISTS", "jobs"}).integer, 0);
}

TEST(CliProcess, ALeaseLostWhileSuspendedIsALossAfterFg) {
    RedisServer srv;
    Terminal t(srv.url());
    ASSERT_TRUE(t.shows("$ "));
    t.type(std::string(DEADBOLT_CLI) + " run --ttl 1s jobs -- sleep 30\n");
    ASSERT_TRUE(eventually([&] { return srv.raw().cmd({"EXISTS", "jobs"}).integer == 1; }));
    ASSERT_TRUE(eventually([&] { return t.foreground() == "sleep"; })) << t.foreground();
    t.type("\x1a");
    ASSERT_TRUE(t.shows("Stopped")) << t.screen();
    // Suspended, run renews nothing: the key expires.
    ASSERT_TRUE(eventually([&] { return srv.raw().cmd({"EXISTS", "jobs"}).integer == 0; }));
    t.type("fg\n");
    EXPECT_TRUE(t.shows("lost")) << t.screen();
    t.type("echo rc=$?\n");
    EXPECT_TRUE(t.shows("rc=70")) << t.screen();
}
