#include "backends/zookeeper/sessions.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "deadbolt/duration.hpp"

namespace deadbolt::detail {
namespace {

// A TTL under the ensemble's shortest session: the server would stretch the session, and a
// crashed holder would keep the lock longer than its TTL says. Refused, as etcd refuses a
// lease under its minimum.
Status too_short(std::string_view what, std::chrono::milliseconds ttl,
                 std::chrono::milliseconds shortest) {
    return Status::error(
        errc::invalid_argument,
        fmt::format("{} {} is under the shortest session this ZooKeeper ensemble grants ({}, "
                    "its minSessionTimeout: 2 ticks unless set): a holding lives on a session "
                    "whose timeout is its TTL; ask for at least {}",
                    what, format_duration(ttl), format_duration(shortest),
                    format_duration(shortest)));
}

}  // namespace

Status ZkSessions::open(const ZkUrl& url, std::unique_ptr<ZkSessions>& out) {
    auto asked = url.session_timeout.count() > 0 ? url.session_timeout : kAskLongest;
    std::shared_ptr<ZkSession> first;
    if (Status st = ZkSession::open(url, asked, first); !st.ok()) return st;
    if (first->timeout() > asked) return too_short("session_timeout", asked, first->timeout());
    out.reset(new ZkSessions(url, std::move(first), asked));
    return {};
}

ZkSessions::ZkSessions(ZkUrl url, std::shared_ptr<ZkSession> first, std::chrono::milliseconds asked)
    : url_(std::move(url)), first_asked_(asked) {
    // The ensemble grants what is asked within its bounds: less than asked is its maximum.
    longest_ = first->timeout();
    follow(first);
    first_ = std::move(first);
}

ZkSessions::~ZkSessions() {
    stop();
}

void ZkSessions::stop() noexcept {
    std::vector<std::shared_ptr<ZkSession>> all;
    {
        std::lock_guard lk(m_);
        stopped_ = true;
        if (first_) all.push_back(first_);
        for (auto& [t, k] : by_ttl_) all.push_back(k.session);
    }
    // Outside m_: a state callback running now holds the session's lock and waits for m_.
    for (auto& s : all) s->set_on_state({});
}

void ZkSessions::on_expiry(std::function<void()> f) {
    std::lock_guard lk(m_);
    on_expiry_ = std::move(f);
}

void ZkSessions::follow(const std::shared_ptr<ZkSession>& s) {
    // The session calls this while it lives, and stop() silences it before this object goes.
    s->set_on_state([this, raw = s.get()] {
        if (raw->expired()) expired();
    });
}

void ZkSessions::expired() {
    std::function<void()> f;
    {
        std::lock_guard lk(m_);
        if (stopped_) return;
        f = on_expiry_;
    }
    if (f) f();
}

std::chrono::milliseconds ZkSessions::longest() const {
    std::lock_guard lk(m_);
    return longest_;
}

std::chrono::milliseconds ZkSessions::shortest() const {
    std::lock_guard lk(m_);
    return shortest_;
}

Status ZkSessions::admits(std::chrono::milliseconds ttl) const {
    std::lock_guard lk(m_);
    ttl = std::min(ttl, longest_);
    return shortest_.count() > 0 && ttl < shortest_ ? too_short("ttl", ttl, shortest_) : Status{};
}

Status ZkSessions::any(std::shared_ptr<ZkSession>& out) {
    {
        std::lock_guard lk(m_);
        if (first_ && !first_->expired()) {
            out = first_;
            return {};
        }
    }
    std::lock_guard one(open_m_);
    {
        std::lock_guard lk(m_);  // another caller may have reopened it meanwhile
        if (first_ && !first_->expired()) {
            out = first_;
            return {};
        }
    }
    std::shared_ptr<ZkSession> fresh, old;
    if (Status st = ZkSession::open(url_, first_asked_, fresh); !st.ok()) return st;
    follow(fresh);
    {
        std::lock_guard lk(m_);
        old = std::exchange(first_, fresh);
    }
    if (old) old->set_on_state({});  // outside m_, as in stop()
    out = std::move(fresh);
    return {};
}

std::shared_ptr<ZkSession> ZkSessions::find_locked(std::chrono::milliseconds t,
                                                   Clock::time_point now) {
    if (first_ && !first_->expired() && first_->timeout() == t) return first_;
    auto it = by_ttl_.find(t.count());
    if (it == by_ttl_.end() || it->second.session->expired()) return nullptr;
    it->second.used = now;
    return it->second.session;
}

Status ZkSessions::of_ttl(std::chrono::milliseconds ttl, std::shared_ptr<ZkSession>& out) {
    // Sessions this object lets go: silenced and dropped outside the locks, since a close
    // waits for the ensemble's answer.
    std::vector<std::shared_ptr<ZkSession>> dropped;
    auto let_go = [&] {
        for (auto& s : dropped) s->set_on_state({});
        dropped.clear();
    };
    {
        std::lock_guard lk(m_);
        ttl = std::min(ttl, longest_);
        if (shortest_.count() > 0 && ttl < shortest_) return too_short("ttl", ttl, shortest_);
        auto now = Clock::now();
        // Sessions of other TTLs that nothing holds or waits on (this object keeps the only
        // reference) and nothing asked for lately go; so do expired ones nothing holds.
        for (auto it = by_ttl_.begin(); it != by_ttl_.end();) {
            auto& k = it->second;
            bool unused =
                k.session.use_count() == 1 &&
                (k.session->expired() || (it->first != ttl.count() && now - k.used >= kIdle));
            if (unused) {
                dropped.push_back(std::move(k.session));
                it = by_ttl_.erase(it);
            } else {
                ++it;
            }
        }
        out = find_locked(ttl, now);
    }
    let_go();
    if (out) return {};
    // The first session serves the longest TTL (reopened when it expired).
    if (ttl == longest() && any(out).ok() && out->timeout() == ttl) return {};
    out.reset();
    Status st;
    {
        std::lock_guard one(open_m_);
        {
            std::lock_guard lk(m_);  // another caller of this TTL may have opened it meanwhile
            if (stopped_)
                return Status::error(errc::connection_lost, "the ZooKeeper client is closing");
            if ((out = find_locked(ttl, Clock::now()))) return {};
        }
        std::shared_ptr<ZkSession> fresh;
        if (st = ZkSession::open(url_, ttl, fresh); !st.ok()) return st;
        const auto granted = fresh->timeout();
        follow(fresh);
        std::lock_guard lk(m_);
        if (stopped_) {  // stop() did not see it: silence it here
            dropped.push_back(fresh);
            st = Status::error(errc::connection_lost, "the ZooKeeper client is closing");
        } else {
            auto& k = by_ttl_[granted.count()];
            if (!k.session || k.session->expired()) {
                if (k.session) dropped.push_back(std::move(k.session));
                k = {fresh, Clock::now()};  // a session of what was granted serves that TTL too
            } else {
                dropped.push_back(fresh);
            }
            if (granted > ttl) {
                shortest_ = granted;  // the ensemble stretched it to its minimum
                st = too_short("ttl", ttl, granted);
            } else if (granted < ttl) {
                // A server that grants less than the first session learned: the servers'
                // maxima differ. Later holdings are cut to what it granted; this one is not
                // given a session that keeps it shorter than it would believe.
                longest_ = std::min(longest_, granted);
                st = Status::error(
                    errc::invalid_argument,
                    fmt::format("this ZooKeeper ensemble granted a session of {} for a ttl of "
                                "{}: its servers' maxSessionTimeout differ; ask for a ttl of "
                                "at most {}",
                                format_duration(granted), format_duration(ttl),
                                format_duration(granted)));
            } else {
                out = k.session;
            }
        }
    }
    let_go();
    return st;
}

}  // namespace deadbolt::detail
