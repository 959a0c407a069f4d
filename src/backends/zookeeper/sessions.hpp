// ZkSessions: the client's ZooKeeper sessions. A holding lives on a session whose timeout is
// its TTL, so that its holder's crash keeps the lock that long and no longer (as etcd keeps a
// lease per TTL): one session per distinct TTL, shared by every holding and waiter of that TTL.
// The first session asks for the longest timeout the URL allows (its session_timeout, else far
// more than any ensemble grants) and so learns the ensemble's maximum, which bounds every TTL;
// it serves reads, administration and the holdings of that longest TTL. The ensemble's minimum
// is learned from the first TTL under it, which is refused naming it. A TTL's session that
// nothing used for a while is closed at the next acquisition; an expired one is replaced.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include "backends/zookeeper/session.hpp"
#include "backends/zookeeper/url.hpp"
#include "core/status.hpp"

namespace deadbolt::detail {

class ZkSessions {
  public:
    /// What the first session asks for when the URL sets no session_timeout: more than an
    /// ensemble grants (its maxSessionTimeout, 20 ticks by default), so the answer is its
    /// maximum.
    static constexpr std::chrono::milliseconds kAskLongest{24LL * 3600 * 1000};
    /// How long a TTL's session that nothing holds or waits on stays open for the next
    /// acquisition of that TTL.
    static constexpr std::chrono::milliseconds kIdle{2000};

    /// The client's sessions, with the first one open (ZkSession::open). Fails as that fails,
    /// and with invalid_argument when the URL's session_timeout is under the shortest session
    /// the ensemble grants (naming it).
    static Status open(const ZkUrl& url, std::unique_ptr<ZkSessions>& out);
    /// Stops telling expiries; the sessions close once nothing holds them.
    ~ZkSessions();
    ZkSessions(const ZkSessions&) = delete;
    ZkSessions& operator=(const ZkSessions&) = delete;

    /// Calls f when one of the sessions expires (its nodes are gone), on the C client's
    /// thread, which f must not block. Set before any session is handed out.
    void on_expiry(std::function<void()> f);
    /// The session for reads and administration, reopened when it expired. Fails as opening
    /// fails.
    Status any(std::shared_ptr<ZkSession>& out);
    /// The session for holdings (and waiters) of ttl, whose timeout is ttl (longest() for a
    /// longer one); opened at its first use, reopened when it expired. Closes the sessions of
    /// other TTLs that nothing used for kIdle. Fails with invalid_argument when ttl is under
    /// the shortest session the ensemble grants (naming it), or as opening fails.
    Status of_ttl(std::chrono::milliseconds ttl, std::shared_ptr<ZkSession>& out);
    /// Ok unless ttl (cut to longest()) is known to be under the shortest session the
    /// ensemble grants: then invalid_argument naming it.
    Status admits(std::chrono::milliseconds ttl) const;
    /// The longest TTL a holding keeps: the longest session the ensemble grants, or the URL's
    /// session_timeout when that is shorter.
    std::chrono::milliseconds longest() const;
    /// The shortest session the ensemble grants, once a TTL under it was asked for; 0 before.
    std::chrono::milliseconds shortest() const;
    /// Stops telling expiries: once this returns, the callback is not running and will not
    /// run. Never throws.
    void stop() noexcept;

  private:
    ZkSessions(ZkUrl url, std::shared_ptr<ZkSession> first, std::chrono::milliseconds asked);
    // Tells this object when s expires.
    void follow(const std::shared_ptr<ZkSession>& s);
    void expired();
    // The open session of timeout t, if any (m_ held).
    std::shared_ptr<ZkSession> find_locked(std::chrono::milliseconds t, Clock::time_point now);

    struct Kept {
        std::shared_ptr<ZkSession> session;
        Clock::time_point used;  // last handed out
    };

    const ZkUrl url_;
    const std::chrono::milliseconds first_asked_;
    std::mutex open_m_;  // one session opened at a time: callers of one TTL share it
    mutable std::mutex m_;
    std::shared_ptr<ZkSession> first_;
    std::map<std::int64_t, Kept> by_ttl_;  // by timeout in ms; not the first session
    std::chrono::milliseconds longest_{0};
    std::chrono::milliseconds shortest_{0};
    bool stopped_ = false;
    std::function<void()> on_expiry_;
};

}  // namespace deadbolt::detail
