// deadbolt run: hold a lock while a command runs, like flock(1) across machines.
//
// The command runs in its own process group, so a lost lease stops all of it (a shell and its
// children), not only its first process; on a terminal that group gets the foreground.
//
// Signals are blocked in every thread and taken with sigtimedwait on the main thread, so one
// loop reacts to all of them: SIGCHLD (the command ended or stopped), SIGINT/SIGTERM/SIGHUP/
// SIGQUIT/SIGUSR2 (forwarded to the command, or abort the wait), SIGUSR1 (raised by ourselves:
// lease lost or acquired; from anyone else it is forwarded too). If run dies anyway (kill -9),
// its guard kills the command (guard.hpp).
//
// Job control: when the command stops on a terminal (Ctrl-Z), run takes the terminal back and
// stops too, so the shell gets its prompt; `fg` continues run, which continues the command.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

#include "commands.hpp"
#include "common.hpp"
#include "describe.hpp"
#include "guard.hpp"

extern char** environ;

namespace deadbolt::cli {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

sigset_t handled_signals() {
    sigset_t s;
    sigemptyset(&s);
    // SIGTTOU too: taking the terminal back from the command's group must not stop us.
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR2, SIGCHLD, SIGUSR1, SIGTTOU})
        sigaddset(&s, sig);
    return s;
}

// Next signal meant for the command, or for our own loop (SIGCHLD, our own SIGUSR1); 0 after
// `wait`. Another process's SIGUSR1 counts as one for the command.
int next_signal(const sigset_t& set, milliseconds wait, bool* from_us = nullptr) {
    timespec ts{static_cast<time_t>(wait.count() / 1000),
                static_cast<long>((wait.count() % 1000) * 1000000)};
    siginfo_t info{};
    int sig = sigtimedwait(&set, &info, &ts);
    if (from_us) *from_us = sig == SIGUSR1 && info.si_pid == getpid();
    return sig < 0 ? 0 : sig;
}

bool forwarded(int sig, bool from_us) {
    return sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT || sig == SIGUSR2 ||
           (sig == SIGUSR1 && !from_us);
}

// Who this process is, for observers of an election it wins.
std::string default_leader_value() {
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) != 0) host[0] = 0;
    return fmt::format("{}:{}", host, getpid());
}

// Who keeps a lock from us, as the engine tells it now (one more round trip, on refusal
// only); "someone else" when it cannot tell.
std::string who_holds(Client& client, const RunArgs& a) {
    try {
        if (a.elect) {
            auto l = client.election(a.name).leader();
            if (l.elected) return fmt::format("the leader '{}' (term {})", l.value, l.term);
        }
        auto s = client.status(a.name);
        if (s.held && !s.held_by.empty()) {
            std::string who = holder_text(s.held_by.front());
            if (s.holders > 1) who += fmt::format(" and {} more", s.holders - 1);
            if (s.last_fence != 0 && s.kind != "readers" && s.kind != "semaphore")
                who += fmt::format(", fence {}", s.last_fence);
            return who;
        }
    } catch (const std::exception&) {
        // The refusal stands; who holds it is a courtesy.
    }
    return "someone else";
}

// Acquires on a helper thread so the main thread can show progress and take signals.
std::optional<Lease> acquire(Client& client, const RunArgs& a, const MutexOptions& o,
                             std::optional<milliseconds> wait, const sigset_t& signals,
                             int& exit_code) {
    std::stop_source cancel;
    std::mutex m;
    WaitInfo last{milliseconds(0), milliseconds(0)};
    Clock::time_point last_at{};
    bool waiting = false;
    AcquireOptions how;
    how.cancel = cancel.get_token();
    if (wait) how.deadline = Clock::now() + *wait;
    how.on_wait = [&](const WaitInfo& w) {
        std::lock_guard lk(m);
        last = w;
        last_at = Clock::now();
        waiting = true;
    };
    std::optional<Lease> lease;
    std::exception_ptr error;
    std::atomic<bool> done{false};
    std::thread t([&] {
        try {
            if (a.elect)
                lease.emplace(client.campaign(
                    a.name, a.value.empty() ? default_leader_value() : a.value, o, how));
            else if (a.permits > 0)
                lease.emplace(client.permit_semaphore(a.name, a.permits, o).acquire(how));
            else
                lease.emplace(client.acquire(a.name,
                                             a.shared  ? LockMode::shared
                                             : a.write ? LockMode::write
                                             : a.fair  ? LockMode::fair
                                                       : LockMode::exclusive,
                                             o, how));
        } catch (...) {
            error = std::current_exception();
        }
        done = true;
        kill(getpid(), SIGUSR1);  // wake the main loop
    });
    bool tty = isatty(STDERR_FILENO);
    auto started = Clock::now();
    bool shown = false;
    int interrupted = 0;
    while (!done) {
        bool from_us = false;
        int sig = next_signal(signals, milliseconds(200), &from_us);
        if (forwarded(sig, from_us)) {
            interrupted = sig;
            cancel.request_stop();
        }
        std::lock_guard lk(m);
        if (tty && waiting && !done) {
            // Drawn from what the last attempt said; no extra server traffic.
            auto left =
                last.holder_ttl - std::chrono::duration_cast<milliseconds>(Clock::now() - last_at);
            std::string holder =
                last.retrying
                    ? fmt::format("server unreachable, retrying ({})", last.retrying.message())
                : last.holder_ttl.count() < 0
                    ? "holder set no expiry"
                    : fmt::format("holder's lease ends in {}",
                                  format_duration(std::max(left, milliseconds(0))));
            fmt::print(
                stderr, "\r\033[Kdeadbolt: waiting for '{}': {} so far, {}", a.name,
                format_duration(std::chrono::duration_cast<milliseconds>(Clock::now() - started)),
                holder);
            shown = true;
        }
    }
    t.join();
    if (shown) fmt::print(stderr, "\r\033[K");
    if (interrupted && !lease) {
        fmt::print(stderr, "deadbolt: interrupted while waiting for '{}'\n", a.name);
        exit_code = 128 + interrupted;
        return std::nullopt;
    }
    if (error) {
        try {
            std::rethrow_exception(error);
        } catch (const LockError& e) {
            if (e.code() == errc::not_acquired) {
                fmt::print(stderr, "deadbolt: '{}' is held by {}{}\n", a.name, who_holds(client, a),
                           wait && wait->count() > 0
                               ? fmt::format(" (waited {})", format_duration(*wait))
                               : "");
                exit_code = a.conflict_exit;
                return std::nullopt;
            }
            exit_code = report(e);
            return std::nullopt;
        } catch (const std::exception& e) {
            exit_code = report(e);
            return std::nullopt;
        }
    }
    return lease;
}

// Connects; with time to wait (--wait D), a server that cannot be reached yet is retried with
// backoff until D has passed, a signal interrupts, or it answers.
std::optional<Client> connect_waiting(const RunArgs& a, std::optional<milliseconds> wait,
                                      const sigset_t& signals, int& exit_code) {
    auto deadline = Clock::now() + wait.value_or(milliseconds(0));
    bool tty = isatty(STDERR_FILENO), shown = false;
    for (unsigned attempt = 0;; ++attempt) {
        try {
            auto client = connect(a.url);
            if (shown) fmt::print(stderr, "\r\033[K");
            return client;
        } catch (const ConnectionError& e) {
            if (!e.retryable() || Clock::now() >= deadline) {
                if (shown) fmt::print(stderr, "\r\033[K");
                exit_code = report(e);
                return std::nullopt;
            }
            if (tty) {
                fmt::print(stderr,
                           "\r\033[Kdeadbolt: waiting for '{}': server unreachable, "
                           "retrying ({})",
                           a.name, e.what());
                shown = true;
            }
        }
        auto pause = std::min(milliseconds(100 << std::min(attempt, 3U)),
                              std::chrono::duration_cast<milliseconds>(deadline - Clock::now()));
        bool from_us = false;
        if (int sig = next_signal(signals, std::max(pause, milliseconds(1)), &from_us);
            forwarded(sig, from_us)) {
            if (shown) fmt::print(stderr, "\r\033[K");
            fmt::print(stderr, "deadbolt: interrupted while waiting for '{}'\n", a.name);
            exit_code = 128 + sig;
            return std::nullopt;
        }
    }
}

// Starts the command with the lease in its environment; sets exit_code when it cannot.
// take_terminal: the command's group gets the terminal (we are in the foreground of one).
pid_t spawn(const RunArgs& a, const Lease& lease, bool take_terminal, int& exit_code) {
    int errpipe[2];
    if (pipe2(errpipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    // Built before fork: between fork and exec only async-signal-safe calls (we have threads).
    std::vector<std::string> env_store = {"DEADBOLT_NAME=" + a.name,
                                          "DEADBOLT_FENCE=" + std::to_string(lease.fence()),
                                          "DEADBOLT_TOKEN=" + lease.token()};
    for (char** e = environ; *e; ++e) {
        std::string_view kv(*e);
        if (kv.starts_with("DEADBOLT_NAME=") || kv.starts_with("DEADBOLT_FENCE=") ||
            kv.starts_with("DEADBOLT_TOKEN=") || kv.starts_with("DEADBOLT_PASSWORD="))
            continue;
        env_store.emplace_back(kv);
    }
    std::vector<char*> envp;
    envp.reserve(env_store.size() + 1);
    for (auto& kv : env_store) envp.push_back(kv.data());
    envp.push_back(nullptr);
    std::vector<char*> argv;
    for (const auto& s : a.command) argv.push_back(const_cast<char*>(s.c_str()));
    argv.push_back(nullptr);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        if (!die_with_parent(parent)) _exit(127);
        setpgid(0, 0);
        // Both sides take the terminal, as shells do, so the command never reads it from the
        // background (SIGTTIN). SIGTTOU is still blocked here, so this cannot stop us.
        if (take_terminal) tcsetpgrp(STDIN_FILENO, getpid());
        signal(SIGPIPE, SIG_DFL);  // run ignores it; exec would keep that
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        execvpe(argv[0], argv.data(), envp.data());
        int err = errno;
        (void)!write(errpipe[1], &err, sizeof err);
        _exit(127);
    }
    if (pid > 0) setpgid(pid, pid);  // both sides, so neither races the other
    close(errpipe[1]);
    int err = 0;
    ssize_t n = read(errpipe[0], &err, sizeof err);
    close(errpipe[0]);
    if (pid < 0 || n == sizeof err) {
        if (pid > 0) waitpid(pid, nullptr, 0);
        bool missing = n == sizeof err && err == ENOENT;
        fmt::print(stderr, "deadbolt: cannot run '{}': {}\n", a.command[0],
                   pid < 0 ? std::strerror(errno) : std::strerror(err));
        exit_code = missing ? kNotFound : kCannotExec;
        return -1;
    }
    return pid;
}

// Whether the terminal on stdin has group (ours by default) in its foreground.
bool in_foreground(pid_t group = getpgrp()) {
    return isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == group;
}

// The command stopped on our terminal (Ctrl-Z): stop with it, as a shell's job does, so the
// shell gets the terminal back; when continued (fg), give the command the terminal and continue
// it. A lease lost meanwhile is found by the loop as any loss.
void suspend_with(pid_t child) {
    if (in_foreground(child)) tcsetpgrp(STDIN_FILENO, getpgrp());
    raise(SIGSTOP);
    if (in_foreground()) tcsetpgrp(STDIN_FILENO, child);
    kill(-child, SIGCONT);
}

// Background processes the command left in its group (orphans now our children: we are their
// subreaper) would run on without the lock: SIGTERM, SIGKILL after grace, and reap them.
void end_leftovers(pid_t group, milliseconds grace) {
    if (kill(-group, SIGTERM) != 0) return;  // nobody left
    kill(-group, SIGCONT);                   // a stopped process cannot act on SIGTERM
    auto until = Clock::now() + grace;
    while (waitpid(-group, nullptr, WNOHANG) >= 0) {
        if (Clock::now() >= until) kill(-group, SIGKILL);
        std::this_thread::sleep_for(milliseconds(10));
    }
}

}  // namespace

namespace {

// What run and elect share: the lease's shape, how long to wait, how to stop the command.
void add_lease_options(CLI::App& cmd, RunArgs& a) {
    add_url_option(cmd, a.url);
    cmd.add_option("--ttl", a.ttl,
                   "Lease TTL, renewed every TTL/3 while the command runs (default 30s)");
    auto* wait = cmd.add_option("-w,--wait", a.wait,
                                "Give up after waiting this long (a bare number is seconds, as "
                                "flock -w; default: wait as long as it takes)");
    cmd.add_flag("-n,--no-wait", a.no_wait, "Fail at once (exit 75) if the lock is held")
        ->excludes(wait);
    cmd.add_option("--lock-delay", a.lock_delay,
                   "After a holder vanishes without releasing, keep the lock blocked this long");
    cmd.add_option("--max-hold", a.max_hold,
                   "Stop renewing after this long (the lease then runs out)");
    cmd.add_option("--kill-grace", a.kill_grace,
                   "After the lease is lost: SIGTERM, then SIGKILL after this long (default 10s)");
}

}  // namespace

void add_elect_command(CLI::App& app, RunArgs& a) {
    a.elect = true;
    auto* cmd = app.add_subcommand(
        "elect", "Run a command while this process is the elected leader of NAME");
    add_lease_options(*cmd, a);
    cmd->add_option("--value", a.value,
                    "What the leader proclaims to observers (e.g. its address; default: "
                    "hostname:pid)");
    cmd->add_flag("--observe", a.observe,
                  "Print the leader and every change until interrupted (like etcdctl elect -l)");
    cmd->add_option("NAME", a.name, "Election name")->required();
    cmd->add_option("COMMAND", a.command, "Command and its arguments (after --)");
    cmd->footer(
        std::string("Waits until elected, runs the command, and resigns when it ends. If the "
                    "term is lost, the command is stopped (exit 70). DEADBOLT_FENCE holds the "
                    "term, higher for every new leader.\n\nExamples:\n"
                    "  deadbolt elect scheduler -- ./scheduler --active\n"
                    "  deadbolt elect --value 10.0.0.7:8080 primary -- ./serve.sh\n") +
        kExitCodesHelp);
}

void add_run_command(CLI::App& app, RunArgs& a) {
    auto* cmd = app.add_subcommand(
        "run", "Run a command while holding a lock (like flock, across machines)");
    add_lease_options(*cmd, a);
    auto* shared = cmd->add_flag("-s,--shared", a.shared,
                                 "Take a read (shared) lease of an RWLock named NAME");
    auto* write = cmd->add_flag("-x,--write", a.write,
                                "Take the write (exclusive) lease of that RWLock (waits for "
                                "--shared holders)");
    auto* fair = cmd->add_flag("--fair", a.fair, "Wait in a FIFO queue (FairMutex)");
    auto* permits = cmd->add_option("--permits", a.permits,
                                    "Take one of N slots of a semaphore (like consul lock -n)")
                        ->check(CLI::PositiveNumber);
    shared->excludes(write)->excludes(fair)->excludes(permits);
    write->excludes(fair)->excludes(permits);
    fair->excludes(permits);
    cmd->add_option("-c,--command", a.shell, "Run this shell command (sh -c), like flock -c");
    cmd->add_option("-E,--conflict-exit-code", a.conflict_exit,
                    "Exit with this code when the lock is not obtained (default 75), like "
                    "flock -E, so the command's own codes can be told apart")
        ->check(CLI::Range(0, 255));
    cmd->add_option("NAME", a.name, "Lock name")->required();
    cmd->add_option("COMMAND", a.command, "Command and its arguments (after --)");
    cmd->footer(
        std::string(
            "The command gets DEADBOLT_NAME, DEADBOLT_FENCE (fencing token, strictly "
            "increasing per name) and DEADBOLT_TOKEN in its environment.\n\nExamples:\n"
            "  deadbolt run nightly-backup -- ./backup.sh\n"
            "  deadbolt run --no-wait --ttl 10s cron:report -- ./report.py\n"
            "  deadbolt run --permits 4 encoders -- ./encode.sh   # at most 4 at once\n"
            "  deadbolt run --shared catalog -- ./read-catalog.sh  # many readers, no writer\n"
            "  DEADBOLT_URL=redis://:pw@10.0.0.5 deadbolt run --wait 2m deploy -- make deploy\n") +
        kExitCodesHelp);
}

namespace {

// elect --observe: the leader now, then each change, one line each, until interrupted.
int observe_command(const RunArgs& a) {
    auto client = connect(a.url);
    auto election = client.election(a.name);
    auto print = [&](const Leader& l) {
        if (l.elected)
            fmt::print("{}: leader '{}' (term {})\n", a.name, l.value, l.term);
        else
            fmt::print("{}: no leader\n", a.name);
        std::fflush(stdout);
    };
    auto seen = election.leader();
    print(seen);
    for (;;) {
        auto now = election.observe(seen);
        if (!now.same_as(seen)) print(now);
        seen = now;
    }
}

}  // namespace

int run_command(const RunArgs& given) {
    if (given.observe) {
        if (!given.command.empty())
            throw UsageProblem("elect --observe runs no command: drop the command");
        return observe_command(given);
    }
    RunArgs a = given;
    if (!a.shell.empty() && !a.command.empty())
        throw UsageProblem("give the command after -- or as -c 'shell command', not both");
    if (!a.shell.empty()) a.command = {"sh", "-c", a.shell};
    if (a.command.empty())
        throw UsageProblem(
            "no command: give it after -- (deadbolt run NAME -- CMD ARGS...) or "
            "as -c 'shell command'");
    MutexOptions o;
    o.ttl = duration_arg("--ttl", a.ttl);
    o.lock_delay = duration_arg("--lock-delay", a.lock_delay);
    o.max_hold = duration_arg("--max-hold", a.max_hold);
    auto grace = duration_arg("--kill-grace", a.kill_grace);
    std::optional<milliseconds> wait;
    if (a.no_wait) wait = milliseconds(0);
    if (!a.wait.empty())
        wait = duration_arg("--wait", a.wait.find_first_not_of("0123456789.") == std::string::npos
                                          ? a.wait + "s"  // flock -w's seconds
                                          : a.wait);

    // Before any thread exists, so every thread inherits the mask.
    sigset_t signals = handled_signals();
    sigprocmask(SIG_BLOCK, &signals, nullptr);
    signal(SIGPIPE, SIG_IGN);  // a closed stderr must not kill the lock holder

    int exit_code = kOk;
    auto client = connect_waiting(a, wait, signals, exit_code);
    if (!client) return exit_code;
    auto lease = acquire(*client, a, o, wait, signals, exit_code);
    if (!lease) return exit_code;
    std::stop_callback on_lost(lease->stop_token(), [] { kill(getpid(), SIGUSR1); });

    bool took_terminal = in_foreground();
    // The command's orphans become our children, so leftovers can be reaped (end_leftovers).
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    Guard guard;
    pid_t child = spawn(a, *lease, took_terminal, exit_code);
    if (child < 0) return exit_code;
    guard.watch(child);
    if (took_terminal) tcsetpgrp(STDIN_FILENO, child);
    std::optional<Clock::time_point> term_sent;
    int status = 0;
    for (;;) {
        bool from_us = false;
        int sig = next_signal(signals, milliseconds(100), &from_us);
        if (forwarded(sig, from_us)) kill(-child, sig);
        if (waitpid(child, &status, WNOHANG | WUNTRACED) == child) {
            if (!WIFSTOPPED(status)) break;
            if (took_terminal) suspend_with(child);
        }
        if (lease->lost() && !term_sent) {
            fmt::print(
                stderr,
                "deadbolt: lease on '{}' lost; stopping the command (SIGTERM, SIGKILL in {})\n",
                a.name, format_duration(grace));
            kill(-child, SIGTERM);
            term_sent = Clock::now();
        }
        if (term_sent && Clock::now() - *term_sent >= grace) kill(-child, SIGKILL);
    }
    if (took_terminal && in_foreground(child)) tcsetpgrp(STDIN_FILENO, getpgrp());
    // Whatever the command left running in its group goes with the lock, before it is released.
    end_leftovers(child, term_sent ? milliseconds(0) : grace);
    guard.dismiss();
    std::error_code ec;
    lease->release(ec);
    if (ec && ec != errc::not_owner && !lease->lost()) {
        // The reply was lost: whether the lock was still ours up to the release (and not lost
        // to a restart or a failover meanwhile) is learned when the server answers again.
        fmt::print(stderr,
                   "deadbolt: releasing '{}': {}; asking again until the server answers (at "
                   "most until the lease would have expired)\n",
                   a.name, ec.message());
        ec = lease->settle(lease->valid_until() + o.ttl + o.lock_delay);
    }
    // Not ours at release: it was lost at some point while the command ran.
    bool lost = lease->lost() || ec == errc::not_owner;
    if (lost) {
        fmt::print(stderr, "deadbolt: lease on '{}' was lost while the command ran\n", a.name);
        return kLeaseLost;
    }
    if (ec) {
        fmt::print(stderr,
                   "deadbolt: releasing '{}': {}: whether the lease was still ours when the "
                   "command ended is unknown\n",
                   a.name, ec.message());
        return kServer;
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return kServer;
}

}  // namespace deadbolt::cli
