#include "backends/zookeeper/claim.hpp"

#include <fmt/format.h>

#include <optional>
#include <tuple>

#include "backends/zookeeper/paths.hpp"
#include "core/reentrant_value.hpp"

namespace deadbolt::detail {

ZkClaim::ZkClaim(ZkStore& store, const LockSpec& spec, std::stop_token cancel)
    : store_(store), spec_(spec), cancel_(std::move(cancel)) {
    std::string why;
    dir_ = znode_of(spec.name, why);  // supports() refused names it cannot place
    // Threads of this process line up here first; readers share, and a reentrant lock's
    // holder may come again while it holds.
    if (spec.shape != Shape::read && spec.shape != Shape::reentrant)
        traits_.local_line = std::make_shared<const std::string>(dir_);
    traits_.abandons = true;        // our node keeps our place: delete it when we give up
    traits_.expiry_wakes = true;    // a holder's session expiry deletes its node: watched
    traits_.strays_live_on = true;  // a stray node lives while our session does
}

ZkClaim::~ZkClaim() {
    disarm();
}

Status ZkClaim::place(Place& p, const std::string& token, Clock::time_point by,
                      std::optional<ZkReply>& listed) {
    auto as = spec_.shape == Shape::read     ? Queues::read
              : spec_.shape == Shape::write  ? Queues::write
              : spec_.shape == Shape::leader ? Queues::latch
                                             : Queues::lock;
    // Our token names our host and process for `status`, and our session's timeout how long
    // our crash would keep the node; a reentrant node counts its owner's holds; a candidate's
    // holds what it proclaims (LeaderLatch's participant id).
    auto data = spec_.shape == Shape::reentrant ? reentrant_value(1, spec_.owner)
                : spec_.shape == Shape::leader  ? spec_.value
                                                : holder_data(token, p.session->timeout());
    return store_.put_in_line(p, dir_, contender_prefix(p.guid, as), data,
                              fmt::format("acquiring '{}'", spec_.name), by, listed);
}

void ZkClaim::attempt(const std::string& token, std::chrono::milliseconds /*keep*/, Attempted& a,
                      Fences& f) {
    try_once(token, a, f);
    // The core arms once per acquisition, but a watch fires once and the contender ahead may
    // change: a refusal moves the watch to it, or waits would return at once (polling).
    if (armed_ && a.status.ok() && !a.acquired && (ahead_ != watched_ || wake_->fired()))
        a.status = watch_ahead(store_.deadline());
}

void ZkClaim::try_once(const std::string& token, Attempted& a, Fences& f) {
    auto by = store_.deadline();
    std::shared_ptr<ZkSession> s;  // the session of our TTL: a crash keeps our node that long
    if (a.status = store_.session_for(spec_.options.ttl, s); !a.status.ok()) return;
    Place& p = places_[token];
    if (p.session != s) {  // a new session: the old one's nodes are gone
        p = Place{};
        p.session = s;
        p.guid = new_guid();
    }
    if (spec_.shape == Shape::reentrant) {
        bool joined = false;
        if (a.status = join(p, a, f, by, joined); !a.status.ok() || joined) return;
    }
    for (int round = 0; round < 3; ++round) {
        std::optional<ZkReply> listed;
        if (p.node.empty())
            if (a.status = place(p, token, by, listed); !a.status.ok()) return;
        if (a.status = look(p, a, f, by, listed); !a.status.ok() || !p.node.empty()) return;
    }
    a.pttl = std::chrono::milliseconds(0);  // our node keeps vanishing: look again soon
}

Status ZkClaim::join(Place& p, Attempted& a, Fences& f, Clock::time_point by, bool& joined) {
    ZkSession& s = *p.session;
    auto what = fmt::format("acquiring '{}'", spec_.name);
    for (int round = 0; round < 3; ++round) {
        auto kids = s.children(dir_, by);
        if (kids.rc == ZNONODE) return {};
        if (!kids.ok()) return s.fail(kids, what, false);
        auto line = in_line(kids.children);
        if (line.empty()) return {};
        auto head = dir_ + "/" + line.front().name;
        if (head == p.node) return {};  // our own node holds: the line says so
        auto now = s.get(head, by);
        if (now.rc == ZNONODE) continue;
        if (!now.ok()) return s.fail(now, what, false);
        auto holds = holds_of(now.data, spec_.owner);
        if (!holds) return {};  // another's: queue
        // Nobody of this client holds it, yet its owner id does: a grant whose reply was
        // lost. That leftover goes, and this claim queues afresh for a hold of its own.
        auto r = spec_.leftover_is_new
                     ? s.remove(head, by, now.stat.version)
                     : s.set(head, reentrant_value(*holds + 1, spec_.owner), now.stat.version, by);
        if (r.rc == ZBADVERSION || r.rc == ZNONODE) continue;  // it moved: look again
        if (!r.ok()) return s.fail(r, what, true);
        if (spec_.leftover_is_new) return {};
        if (!p.node.empty()) (void)s.remove(p.node, by);  // our place in line goes
        p.node = head;
        p.czxid = now.stat.czxid;
        p.sent = true;
        joined = a.acquired = true;
        f.fence = static_cast<std::uint64_t>(now.stat.czxid);  // the holding's fence
        store_.watch_own(p);
        return {};
    }
    return {};  // holds keep moving under us: queue with a node of our own
}

Status ZkClaim::look(Place& p, Attempted& a, Fences& f, Clock::time_point by,
                     std::optional<ZkReply>& listed) {
    ZkSession& s = *p.session;
    if (!listed) listed = s.children(dir_, by);
    if (!listed->ok())
        return s.fail(*listed, fmt::format("reading the line of '{}'", spec_.name), false);
    auto line = in_line(listed->children);
    auto mine = p.node.substr(dir_.size() + 1);
    std::size_t i = 0;
    while (i < line.size() && line[i].name != mine) ++i;
    if (i == line.size()) {
        auto there = s.exists(p.node, by);
        if (there.ok())  // never queue twice for one node that the line does not count
            return Status::error(
                errc::server_error,
                fmt::format("'{}' is not counted as a contender of '{}'", p.node, spec_.name));
        if (there.rc != ZNONODE) return s.fail(there, "looking for our node", false);
        p.node.clear();  // deleted from outside: queue again
        p.sent = false;
        return {};
    }
    // What keeps us out: the contender just ahead, or a reader's nearest writer ahead.
    std::optional<std::size_t> blocker;
    if (spec_.shape != Shape::read) {
        if (i > 0) blocker = i - 1;
    } else {
        for (std::size_t j = i; j-- > 0 && !blocker;)
            if (!is_reader(line[j].name)) blocker = j;
    }
    if (!blocker) {
        a.acquired = true;
        store_.watch_own(p);
        // Shared holdings carry no fence (ARCHITECTURE 15); a lock's is its node's czxid.
        f.fence = spec_.shape == Shape::read ? 0 : static_cast<std::uint64_t>(p.czxid);
        return {};
    }
    a.pttl = std::chrono::milliseconds(-1);  // a holder's end is announced by its node's deletion
    ahead_session_ = p.session;
    ahead_ = dir_ + "/" + line[*blocker].name;
    return {};
}

Status ZkClaim::arm(Clock::time_point until) {
    armed_ = true;
    return watch_ahead(std::min(until, store_.deadline()));
}

Status ZkClaim::watch_ahead(Clock::time_point by) {
    watch_.drop();
    wake_->reset();
    watched_ = ahead_;
    if (ahead_.empty() || !ahead_session_) {
        wake_->fire();
        return {};
    }
    watch_.session = ahead_session_;
    auto r = ahead_session_->watch(
        ahead_, by, [w = wake_] { w->fire(); }, watch_.id);
    if (r.rc == ZNONODE) {  // it went before we looked: look again at once
        wake_->fire();
        return {};
    }
    if (!r.ok())
        return ahead_session_->fail(r, fmt::format("watching the line of '{}'", spec_.name), false);
    return {};
}

void ZkClaim::disarm() noexcept {
    armed_ = false;
    watch_.drop();
}

void ZkClaim::wait(Clock::time_point until) {
    wake_->wait(until, cancel_);
}

std::shared_ptr<Holding> ZkClaim::holding(const std::string& token,
                                          std::chrono::milliseconds /*keep*/,
                                          std::uint64_t /*fence*/) const {
    auto it = places_.find(token);
    auto h = holding_of(it != places_.end() ? it->second : Place{}, dir_);
    if (it != places_.end()) {
        if (spec_.shape == Shape::reentrant) h->owner = spec_.owner;
        if (spec_.shape == Shape::leader && !h->node.empty()) store_.add_term(token, h);
    }
    return h;
}

std::shared_ptr<Holding> ZkClaim::waiter(const std::string& token,
                                         std::chrono::milliseconds keep) const {
    return holding(token, keep, 0);
}

}  // namespace deadbolt::detail
