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

// A socket readable because of a running statement's answer: looked at again after this.
constexpr auto kBusy = std::chrono::milliseconds(20);

void arm(int epoll, int fd, int op) noexcept {
    epoll_event e{};
    e.events = EPOLLIN | EPOLLONESHOT;
    e.data.fd = fd;
    ::epoll_ctl(epoll, op, fd, &e);  // a socket closed meanwhile left the set by itself
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
}

void SessionWatch::watch(const std::shared_ptr<SqlSession>& s) {
    int fd = s->socket();
    {
        std::lock_guard lock(m_);
        if (stopped_ || fd < 0) return;
        watched_[fd] = s;
        if (!thread_.running()) thread_ = Background([this] { loop(); });
    }
    // Outside m_, which every grant and release of the process takes (threads queued on it
    // were the SQL engines' main contention). The session is open while its grant is being
    // handed over, so fd is still its socket; the loop finds it in watched_ already.
    epoll_event e{};
    e.events = EPOLLIN | EPOLLONESHOT;
    e.data.fd = fd;
    if (::epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &e) != 0 && errno == EEXIST)
        arm(epoll_, fd, EPOLL_CTL_MOD);
}

void SessionWatch::unwatch(const SqlSession& s) noexcept {
    int fd = -1;
    {
        std::lock_guard lock(m_);
        // By its socket: a release pays one lookup, not a walk over every holding.
        if (auto it = watched_.find(s.socket());
            it != watched_.end() && it->second.lock().get() == &s) {
            fd = it->first;
            watched_.erase(it);
        } else {
            // Closed already (its socket left the epoll set with it): forget its entry, and
            // those of sessions gone meanwhile.
            std::erase_if(watched_, [&](const auto& w) {
                auto p = w.second.lock();
                return !p || p.get() == &s;
            });
        }
    }
    // Outside m_, as in watch(): once s left watched_ the loop no longer touches it, so only
    // our caller, who is still using it, could close it, and fd stays its socket until then.
    if (fd >= 0) ::epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
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
        if (n < 0 && errno != EINTR) return;
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
                busy[fd] = now + kBusy;
            } else if (s->ended_while_idle()) {
                watched_.erase(w);
                ended = true;
            } else {
                arm(epoll_, fd, EPOLL_CTL_MOD);
            }
        }
        lock.unlock();
        if (ended && ended_) ended_();  // the renewer checks every holding now
    }
}

}  // namespace deadbolt::detail
