// SessionWatch: hears at once when the server ends a session that holds a lock while it is
// idle (an operator's pg_terminate_backend or KILL, a cut link, a restart), instead of at the
// holder's next renewal. One thread per client waits on an epoll set of the holdings' idle
// sockets; callers add and remove theirs directly (epoll_ctl), so an acquisition or release
// wakes nobody. A socket that speaks while nobody runs a statement on it was ended by the
// server; one that speaks because a statement is running (its answer) is looked at again a
// moment later (one-shot events, re-armed).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include "backends/sql/session.hpp"
#include "core/background.hpp"

namespace deadbolt::detail {

class SessionWatch {
  public:
    /// ended: called on the watch's thread when the server ended a watched session.
    explicit SessionWatch(std::function<void()> ended);
    /// Stops the watch. Never throws.
    ~SessionWatch();
    SessionWatch(const SessionWatch&) = delete;
    SessionWatch& operator=(const SessionWatch&) = delete;

    /// Watches s from now until unwatch(s), its end, or stop(). Without the kernel's epoll,
    /// nothing is watched: renewals find a lost session, as before.
    void watch(const std::shared_ptr<SqlSession>& s);
    /// Stops watching s (before a statement that ends its holding). Never throws.
    void unwatch(const SqlSession& s) noexcept;
    /// Ends the watch's thread; later watch() calls do nothing. Never throws.
    void stop() noexcept;

  private:
    void loop();

    const std::function<void()> ended_;
    int epoll_ = -1;
    int wake_ = -1;  // an eventfd in the epoll set: stop
    std::mutex m_;
    std::map<int, std::weak_ptr<SqlSession>> watched_;  // by socket
    bool stopped_ = false;
    Background thread_;
};

}  // namespace deadbolt::detail
