// SessionWatch: hears at once when the server ends a session that holds a lock while it is
// idle (an operator's pg_terminate_backend or KILL, a cut link, a restart), instead of at the
// holder's next renewal. One thread per client waits on an epoll set of the sessions' sockets.
// A socket joins the set at its session's first holding and stays until it closes, and only
// the server's end of the connection (EPOLLRDHUP, a hang-up, an error) wakes the thread, not
// an answer: a holding and a release set one flag on the session and make no system call.
// A session that ended while a statement runs on it is looked at again a moment later
// (one-shot events, re-armed); one that ended holding nothing (a pooled one past its idle
// timeout) is closed, and no holder is told.
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

    /// Watches s, which holds a lock from now (call with s->m held), until unwatch(s), its
    /// end, or stop(). Without the kernel's epoll, nothing is watched: renewals find a lost
    /// session, as before.
    void watch(const std::shared_ptr<SqlSession>& s);
    /// s holds nothing from now (before a statement that ends its holding): its end is no
    /// loss. Never throws.
    static void unwatch(SqlSession& s) noexcept;
    /// Ends the watch's thread; later watch() calls do nothing. Never throws.
    void stop() noexcept;

  private:
    void loop();
    // The thread ends on an error of its own: nothing is watched from now on.
    void forsake() noexcept;

    const std::function<void()> ended_;
    int epoll_ = -1;
    int wake_ = -1;  // an eventfd in the epoll set: stop
    std::mutex m_;
    // By socket; a closed session's entry stays until its number is reused.
    std::map<int, std::weak_ptr<SqlSession>> watched_;
    bool stopped_ = false;
    Background thread_;
};

}  // namespace deadbolt::detail
