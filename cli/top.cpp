// deadbolt top: the engine's locks on one screen, listed again every interval, with what
// changed scrolling below. On a terminal it takes the screen and reads keys; otherwise it
// prints one plain frame per listing.
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <deque>
#include <optional>

#include "commands.hpp"
#include "common.hpp"
#include "engines.hpp"
#include "signals.hpp"
#include "top_view.hpp"

namespace deadbolt::cli {

void add_top_command(CLI::App& app, TopArgs& a) {
    auto* cmd = app.add_subcommand("top",
                                   "Watch the engine's locks live: holders, fences, TTLs, "
                                   "waiters, and what was granted, released or expired");
    add_url_option(*cmd, a.url);
    cmd->add_option("PATTERN", a.pattern, "Glob over lock names (* ? [abc]); default: every lock");
    cmd->add_option("--interval", a.interval, "Time between listings")->capture_default_str();
    cmd->add_option("--sort", a.sort, "Row order: name, age (oldest first), waiters, ttl")
        ->check(CLI::IsMember({"name", "age", "waiters", "ttl"}))
        ->capture_default_str();
    cmd->add_option("--iterations,-n", a.iterations,
                    "Stop after this many listings (0: until q, Ctrl-C or SIGTERM)")
        ->capture_default_str();
    cmd->add_flag("--all", a.all,
                  "Also show plain strings and numbers deadbolt did not write (redis-py locks "
                  "look like that)");
    cmd->footer(
        "Each refresh is one `deadbolt list` (SCAN with a page size on Redis, a range or "
        "directory read elsewhere, then one status per lock): events are seen between "
        "listings, so a lock held and freed within one interval is not shown. Keys on a "
        "terminal: q quits, s changes the order. Not on a terminal: one plain frame per "
        "listing.\nExamples:\n  deadbolt top --url redis://127.0.0.1:6379\n  deadbolt "
        "top 'orders:*' --interval 500ms\n  deadbolt top -n 1 > snapshot.txt\n");
}

namespace {

// The terminal as top uses it: its own screen, no echo, keys one at a time; put back as it
// was on every way out (the destructor runs before the process exits with the result).
class Terminal {
  public:
    Terminal() : live_(::isatty(STDOUT_FILENO) != 0) {
        if (!live_) return;
        keys_ = ::isatty(STDIN_FILENO) != 0 && ::tcgetattr(STDIN_FILENO, &was_) == 0;
        if (keys_) {
            termios raw = was_;
            raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);  // ISIG stays: Ctrl-C is SIGINT
            raw.c_cc[VMIN] = 0;
            raw.c_cc[VTIME] = 0;
            ::tcsetattr(STDIN_FILENO, TCSANOW, &raw);
        }
        fmt::print("\x1b[?1049h\x1b[?25l");  // the alternate screen, no cursor
        std::fflush(stdout);
    }
    ~Terminal() {
        if (!live_) return;
        fmt::print("\x1b[?25h\x1b[?1049l");
        std::fflush(stdout);
        if (keys_) ::tcsetattr(STDIN_FILENO, TCSANOW, &was_);
    }
    Terminal(const Terminal&) = delete;
    Terminal& operator=(const Terminal&) = delete;

    bool live() const { return live_; }
    bool keys() const { return keys_; }
    void size(TopScreen& s) const {
        winsize ws{};
        if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0) {
            s.rows = ws.ws_row;
            s.cols = ws.ws_col;
        }
    }
    void draw(const std::vector<std::string>& lines) const {
        // No newline after the last line: on the screen's last row it would scroll the header
        // away.
        std::string out = "\x1b[H";
        for (std::size_t i = 0; i < lines.size(); ++i)
            out += lines[i] + (i + 1 < lines.size() ? "\x1b[K\r\n" : "\x1b[K");
        out += "\x1b[J";
        std::fwrite(out.data(), 1, out.size(), stdout);
        std::fflush(stdout);
    }

  private:
    bool live_;
    bool keys_ = false;
    termios was_{};
};

TopSort sort_of(const std::string& s) {
    if (s == "age") return TopSort::age;
    if (s == "waiters") return TopSort::waiters;
    if (s == "ttl") return TopSort::ttl;
    return TopSort::name;
}

// What ended the view: q or a signal, the last of -n listings, or that one failing.
enum class Ended { asked, done, failed };

// Lists, shows and waits until asked to stop or -n listings were made. The terminal is taken
// here and given back as this returns, before anything else is printed.
Ended watch(const TopArgs& a, const Client& client, std::chrono::milliseconds interval,
            const SignalPipe& signals, TopScreen& screen) {
    std::vector<ListedLock> last;
    std::optional<std::chrono::system_clock::time_point> last_at;  // of the last good listing
    std::deque<TopEvent> events;
    Terminal term;
    screen.keys = term.keys();
    bool keys = term.keys();  // off once stdin hangs up
    auto show = [&] {
        if (term.live()) {
            term.size(screen);
            term.draw(top_lines(last, events, screen, std::chrono::system_clock::now()));
            return;
        }
        // A plain frame per listing, for a pipe or a file: every lock, each event said once.
        screen.rows = screen.cols = 0;
        screen.whole = true;
        for (const auto& l : top_lines(last, events, screen, std::chrono::system_clock::now()))
            fmt::print("{}\n", l);
        fmt::print("\n");
        std::fflush(stdout);
        events.clear();
    };
    for (long n = 0;; ++n) {
        const auto at = std::chrono::system_clock::now();
        const auto next = std::chrono::steady_clock::now() + interval;  // the wall clock may step
        try {
            auto now = client.list(a.pattern, a.all);
            if (last_at) {  // events need a listing before: after a failed first one, none
                auto since = std::chrono::duration_cast<std::chrono::milliseconds>(at - *last_at);
                for (auto& e : top_changes(last, now, at, std::max(since, interval)))
                    events.push_back(std::move(e));
            }
            while (events.size() > 200) events.pop_front();
            last = std::move(now);
            last_at = at;
            screen.error.clear();
        } catch (const UsageError&) {
            throw;  // a pattern the engine refuses will not list next time either
        } catch (const std::exception& e) {
            screen.error = e.what();  // shown, and the next listing tries again
        }
        show();
        if (a.iterations != 0 && n + 1 >= a.iterations)  // a snapshot, or a test's frames
            return screen.error.empty() ? Ended::done : Ended::failed;
        for (;;) {  // the rest of the interval: a key or a signal may come first
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                next - std::chrono::steady_clock::now());
            if (left.count() <= 0) break;
            pollfd fds[2] = {{signals.fd(), POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}};
            int ready = ::poll(fds, keys ? 2 : 1, static_cast<int>(left.count()) + 1);
            if (ready < 0 && errno == EINTR) continue;
            if (ready <= 0) break;
            if (fds[0].revents & POLLIN) {
                for (int sig; (sig = signals.next()) != 0;)
                    if (sig != SIGWINCH && sig != SIGTSTP) return Ended::asked;
            } else {
                char key = 0;
                if ((fds[1].revents & POLLIN) == 0 || ::read(STDIN_FILENO, &key, 1) != 1) {
                    keys = false;  // hung up: no more keys (q is gone; signals still end it)
                    continue;
                }
                if (key == 'q' || key == 'Q') return Ended::asked;
                if (key != 's' && key != 'S') continue;
                screen.sort = next_sort(screen.sort);
            }
            if (term.live()) show();  // resized, or sorted anew
        }
    }
}

}  // namespace

int top_command(const TopArgs& a) {
    const auto interval = duration_arg("--interval", a.interval);
    if (interval.count() <= 0)
        throw UsageProblem("--interval must be more than 0 (e.g. 1s or 500ms)");
    auto client = connect(a.url);  // before the handlers: Ctrl-C during a slow connect just ends it
    // Ctrl-Z (SIGTSTP) is taken and ignored: stopped in raw mode on the alternate screen, top
    // would leave the shell a terminal it cannot use. SIGHUP and Ctrl-\ end it cleanly.
    SignalPipe signals({SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGWINCH, SIGTSTP});
    std::string engine(engine_for(a.url));
    TopScreen screen;
    screen.title = fmt::format("{} '{}'", engine.empty() ? "engine" : engine, a.pattern);
    screen.sort = sort_of(a.sort);
    if (watch(a, client, interval, signals, screen) != Ended::failed) return kOk;
    // A snapshot whose last listing failed says so in its exit code, as `list` would.
    fmt::print(stderr, "deadbolt: the last listing failed: {}\n", screen.error);
    return kServer;
}

}  // namespace deadbolt::cli
