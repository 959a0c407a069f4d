#include "backends/sql/session_watch.hpp"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <utility>

namespace deadbolt::detail {
namespace {

// A socket whose server ended it while a statement ran: looked at again after this.
constexpr auto kBusy = std::chrono::milliseconds(20);
// The server's end of the connection, not its answers (a hang-up and an error always wake).
constexpr std::uint32_t kEnded = EPOLLRDHUP | EPOLLONESHOT;

// False when epoll_ctl failed (errno says why): a socket closed meanwhile left the set by itself.
bool arm(int epoll, int fd, int op) noexcept {
    epoll_event e{};
    e.events = kEnded;
    e.data.fd = fd;
    return ::epoll_ctl(epoll, op, fd, &e) == 0;
}

}  // namespace

SessionWatch::SessionWatch(std::function<void()> ended) : ended_(std::move(ended)) {
    epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
    wake_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    epoll_event e{};
    e.events = EPOLLIN;
    e.data.fd = wake_;
    if (epoll_ >= 0 && wake_ >= 0 && ::epoll_ctl(epoll_, EPOLL_CTL_ADD, wake_, &e) == 0) return;
    stopped_ = true;  // nothing can be watched
}

SessionWatch::~SessionWatch() {
    stop();
    if (wake_ >= 0) ::close(wake_);
    if (epoll_ >= 0) ::close(epoll_);
}

void SessionWatch::stop() noexcept {
    {
        std::lock_guard lock(m_);
        stopped_ = true;
    }
    std::uint64_t one = 1;
    if (wake_ >= 0) [[maybe_unused]]
        auto n = ::write(wake_, &one, sizeof one);
    thread_.end();
    forsake();
}

void SessionWatch::watch(const std::shared_ptr<SqlSession>& s) {
    s->holds = true;
    if (s->watched) return;  // its socket stays in the set until it closes
    int fd = s->socket();
    {
        std::lock_guard lock(m_);
        if (stopped_ || fd < 0) return;
        watched_[fd] = s;
        if (!thread_.running()) thread_ = Background([this] { loop(); });
        // Vouched for before it is armed (no statement runs meanwhile: the caller holds s->m),
        // so that the loop's clear (an end heard at once) or forsake()'s is not overwritten.
        s->watched = true;
    }
    // Outside m_: the session is open (its m is held), so fd is still its socket; the loop
    // finds it in watched_ already. A socket the server ended before this is told at once.
    // One that cannot be armed is not vouched for: its statements look for the end themselves.
    if (!arm(epoll_, fd, EPOLL_CTL_ADD) && !(errno == EEXIST && arm(epoll_, fd, EPOLL_CTL_MOD)))
        s->watched = false;
}

void SessionWatch::unwatch(SqlSession& s) noexcept {
    s.holds = false;
}

void SessionWatch::forsake() noexcept {
    std::lock_guard lock(m_);
    stopped_ = true;
    for (auto& [fd, w] : watched_)
        if (auto s = w.lock()) s->watched = false;  // their statements look for themselves
    watched_.clear();
}

void SessionWatch::loop() {
    std::map<int, Clock::time_point> busy;  // sockets to re-arm, and when
    std::array<epoll_event, 16> events{};
    for (;;) {
        int timeout = -1;
        if (!busy.empty()) {
            auto first = std::min_element(busy.begin(), busy.end(),
                                          [](auto& a, auto& b) { return a.second < b.second; });
            timeout = static_cast<int>(std::max<std::int64_t>(
                0, std::chrono::ceil<std::chrono::milliseconds>(first->second - Clock::now())
                       .count()));
        }
        int n = ::epoll_wait(epoll_, events.data(), static_cast<int>(events.size()), timeout);
        if (n < 0 && errno != EINTR) return forsake();
        auto now = Clock::now();
        bool ended = false;
        std::unique_lock lock(m_);
        if (stopped_) return;
        for (auto it = busy.begin(); it != busy.end();) {
            if (it->second > now) {
                ++it;
                continue;
            }
            if (watched_.contains(it->first)) arm(epoll_, it->first, EPOLL_CTL_MOD);
            it = busy.erase(it);
        }
        for (int i = 0; i < n; ++i) {
            int fd = events[static_cast<std::size_t>(i)].data.fd;
            if (fd == wake_) continue;  // stop, seen above
            auto w = watched_.find(fd);
            auto s = w == watched_.end() ? nullptr : w->second.lock();
            if (!s || s->socket() != fd) continue;
            std::unique_lock statement(s->m, std::try_to_lock);
            if (!statement.owns_lock()) {
                // Until it is re-armed, the session's next statement looks for itself.
                s->watched = false;
                busy[fd] = now + kBusy;
            } else if (s->ended_while_idle()) {
                watched_.erase(w);
                ended = ended || s->holds;
            } else {
                arm(epoll_, fd, EPOLL_CTL_MOD);
            }
        }
        lock.unlock();
        if (ended && ended_) ended_();  // the renewer checks every holding now
    }
}

}  // namespace deadbolt::detail
