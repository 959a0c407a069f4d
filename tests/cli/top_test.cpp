// Issue 33 item 3: `deadbolt top` under a pseudo-terminal (script(1) gives it one) shows a lock
// a `deadbolt run` holds, then its release among the events, takes `s` and `q`, and puts the
// terminal back; not on a terminal it prints plain frames, on every engine.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "cli.hpp"

namespace deadbolt::clitest {
namespace {

using namespace std::chrono_literals;

std::string quoted(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

// `command` run by script(1) on a pseudo-terminal of 40 rows by 240 columns; the test types
// into it and reads its screen's bytes.
class OnATerminal {
  public:
    explicit OnATerminal(const std::string& command) {
        // Everything the child needs is made before fork(): after it, in a process with other
        // threads, only async-signal-safe calls are.
        const std::string line = "stty rows 40 cols 240; " + command;
        const char* argv[] = {"/usr/bin/env", "SHELL=/bin/sh", "TERM=xterm", "script",
                              "-qfec",        line.c_str(),    "/dev/null",  nullptr};
        int in[2], out[2];
        if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) return;
        pid_ = ::fork();
        if (pid_ == 0) {
            ::dup2(in[0], 0);
            ::dup2(out[1], 1);
            ::dup2(out[1], 2);
            ::execv(argv[0], const_cast<char* const*>(argv));
            ::_exit(127);
        }
        ::close(in[0]);
        ::close(out[1]);
        keys_ = in[1];
        screen_ = out[0];
    }
    ~OnATerminal() {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
        if (keys_ >= 0) ::close(keys_);
        if (screen_ >= 0) ::close(screen_);
    }
    OnATerminal(const OnATerminal&) = delete;
    OnATerminal& operator=(const OnATerminal&) = delete;

    /// Reads until everything read since `from` contains text, for up to `within`.
    bool shows(const std::string& text, std::size_t from, std::chrono::seconds within = 30s) {
        auto until = std::chrono::steady_clock::now() + within;
        while (seen_.find(text, from) == std::string::npos) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                until - std::chrono::steady_clock::now());
            if (left.count() <= 0 || !read_some(static_cast<int>(left.count()))) return false;
        }
        return true;
    }
    std::size_t mark() const { return seen_.size(); }
    const std::string& seen() const { return seen_; }
    void type(char c) { EXPECT_EQ(::write(keys_, &c, 1), 1); }
    /// Its exit status once it ends (within 30 s), or -1.
    int ended() {
        const auto until = std::chrono::steady_clock::now() + 30s;
        while (std::chrono::steady_clock::now() < until) {
            // Once the terminal's output is closed, poll returns at once: pace the loop so
            // that the child's exit, which may come well after, is waited for in time.
            if (!read_some(100)) std::this_thread::sleep_for(10ms);
            int st = 0;
            if (::waitpid(pid_, &st, WNOHANG) == pid_) {
                pid_ = 0;
                while (read_some(0)) {
                }
                return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            }
        }
        return -1;
    }

  private:
    bool read_some(int ms) {
        pollfd p{screen_, POLLIN, 0};
        if (::poll(&p, 1, ms) <= 0) return false;
        char buf[4096];
        auto n = ::read(screen_, buf, sizeof buf);
        if (n <= 0) return false;
        seen_.append(buf, static_cast<std::size_t>(n));
        return true;
    }
    pid_t pid_ = -1;
    int keys_ = -1, screen_ = -1;
    std::string seen_;
};

std::string hostname() {
    char h[256] = {};
    ::gethostname(h, sizeof h - 1);
    return h;
}

// A file this test's `deadbolt run` holders wait for (not there yet): they release once it is
// made (go()). Removed with the test.
struct GoFile {
    std::string path = ::testing::TempDir() + "/top-go-" +
                       ::testing::UnitTest::GetInstance()->current_test_info()->name() +
                       std::to_string(::getpid());
    GoFile() { std::remove(path.c_str()); }
    ~GoFile() { std::remove(path.c_str()); }
    GoFile(const GoFile&) = delete;
    GoFile& operator=(const GoFile&) = delete;
    void go() const { std::ofstream{path}.put('\n'); }
    // Lets the holders go as it ends, made after them: a test that ends early (a failed
    // ASSERT) must not leave their command's future waiting forever.
    struct OnExit {
        const GoFile& file;
        ~OnExit() { file.go(); }
    };
};

TEST(CliTop, OnATerminalItShowsAHeldLockThenItsReleaseAndTakesKeys) {
    test::RedisServer srv;
    auto name = own_name("shown");
    GoFile go;
    auto run = deadbolt_async(srv.url(), {"run", "--ttl", "30s", name, "--", "sh", "-c",
                                          "while [ ! -e '" + go.path + "' ]; do sleep 0.1; done"});
    const GoFile::OnExit let_go{go};
    until_held(srv.url(), name);
    // After it, stty says whether the terminal was given back as it was (echo, lines).
    OnATerminal top(quoted(DEADBOLT_CLI) + " top --url " + quoted(srv.url()) + " " +
                    quoted(name + "*") + " --interval 200ms; rc=$?; stty -a; exit $rc");
    ASSERT_TRUE(top.shows("\x1b[?1049h", 0)) << "it takes the terminal's alternate screen";
    auto row = name + "  mutex  " + hostname() + " pid ";
    ASSERT_TRUE(top.shows(row, 0)) << top.seen();
    ASSERT_TRUE(top.shows("1 locks", 0)) << top.seen();
    auto before = top.mark();
    go.go();
    EXPECT_EQ(run.get().rc, 0);
    ASSERT_TRUE(top.shows("released  " + name, before)) << top.seen().substr(before);
    EXPECT_TRUE(top.shows("0 locks", before)) << top.seen().substr(before);
    before = top.mark();
    top.type('s');
    EXPECT_TRUE(top.shows("sort: age", before)) << "s sorts anew: " << top.seen().substr(before);
    before = top.mark();
    top.type('q');
    EXPECT_EQ(top.ended(), 0) << "q quits";
    const auto after = top.seen().substr(before);
    EXPECT_NE(after.find("\x1b[?1049l"), std::string::npos) << "the screen is given back";
    auto settings = after.substr(after.find("\x1b[?1049l"));
    EXPECT_NE(settings.find(" icanon"), std::string::npos) << settings;
    EXPECT_EQ(settings.find("-icanon"), std::string::npos) << "lines, as before: " << settings;
    EXPECT_EQ(settings.find("-echo "), std::string::npos) << "echo, as before: " << settings;
}

template <class E>
class CliTopPlain : public EveryEngine<E> {};
TYPED_TEST_SUITE(CliTopPlain, Engines, BackendName);

TYPED_TEST(CliTopPlain, APipeGetsPlainFramesThatShowTheHolder) {
    auto name = own_name("plain");
    GoFile go;
    auto run =
        deadbolt_async(this->url(), {"run", "--ttl", "30s", name, "--", "sh", "-c",
                                     "while [ ! -e '" + go.path + "' ]; do sleep 0.1; done"});
    const GoFile::OnExit let_go{go};
    until_held(this->url(), name);
    auto frames = this->cli({"top", name + "*", "-n", "2", "--interval", "100ms"});
    go.go();
    EXPECT_EQ(run.get().rc, 0);
    EXPECT_EQ(frames.rc, 0) << frames.out;
    EXPECT_EQ(frames.out.find("\x1b["), std::string::npos) << "no terminal codes in a pipe";
    auto first = frames.out.find(name + "  ");
    ASSERT_NE(first, std::string::npos) << frames.out;
    EXPECT_NE(frames.out.find(name + "  ", first + 1), std::string::npos) << "two frames";
    EXPECT_TRUE(says(frames, {"NAME", "HOLDER", "1 locks"})) << frames.out;
}

TEST(CliTopInput, BadIntervalsSortsAndDeadEnginesAreNamed) {
    test::RedisServer srv;
    auto zero = deadbolt(srv.url(), {"top", "--interval", "0s", "-n", "1"});
    EXPECT_EQ(zero.rc, 64) << zero.out;
    EXPECT_TRUE(says(zero, {"--interval"}));
    auto sort = deadbolt(srv.url(), {"top", "--sort", "size", "-n", "1"});
    EXPECT_EQ(sort.rc, 64) << sort.out;
    EXPECT_TRUE(says(sort, {"size", "--sort"})) << sort.out;
    auto url = srv.url();
    srv.stop();
    auto dead = deadbolt(url, {"top", "-n", "1"});
    EXPECT_EQ(dead.rc, 69) << dead.out;
}

}  // namespace
}  // namespace deadbolt::clitest
