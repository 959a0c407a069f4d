#include "backends/zookeeper/store.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>
#include <utility>

#include "backends/zookeeper/claim.hpp"
#include "backends/zookeeper/multi_claim.hpp"
#include "backends/zookeeper/paths.hpp"
#include "backends/zookeeper/permit_claim.hpp"
#include "core/reentrant_value.hpp"

namespace deadbolt::detail {

ZkStore::ZkStore(ClientImpl& c, std::unique_ptr<ZkSessions> sessions)
    : client_(c), sessions_(std::move(sessions)) {
    alarm_->store = this;
    // An expired session's nodes are gone: every holding on it is lost.
    sessions_->on_expiry([a = alarm_] { raise(a); });
}

ZkStore::~ZkStore() {
    stop();
}

void ZkStore::stop() noexcept {
    {
        std::lock_guard lk(alarm_->m);  // waits for a callback that is posting a check
        alarm_->store = nullptr;
    }
    sessions_->stop();
}

void ZkStore::raise(const std::shared_ptr<Alarm>& a) {
    std::lock_guard lk(a->m);
    if (!a->store || a->pending) return;
    a->pending = true;
    a->store->client_.loop().post([a] {
        ZkStore* store = nullptr;
        {
            std::lock_guard lk(a->m);
            a->pending = false;  // what fires from now on is checked again
            store = a->store;
        }
        if (store && store->on_doubt) store->on_doubt();
    });
}

void ZkStore::arm(const std::shared_ptr<ZkOwnWatch>& w, const std::shared_ptr<ZkSession>& s,
                  const std::string& node) {
    std::uint64_t arming = 0;
    {
        std::lock_guard lk(w->m);
        if (w->set || w->gone) return;
        w->set = true;
        arming = ++w->arming;
    }
    // Not under w->m: a watch that cannot be set is told at once, on this thread.
    auto id = s->watch_data(
        node, [weak = std::weak_ptr<ZkOwnWatch>(w), a = alarm_, arming](ZkWatched what) {
            auto w = weak.lock();
            if (!w) return;  // its holding is gone
            if (what == ZkWatched::gone) w->gone = true;
            {
                std::lock_guard lk(w->m);
                if (w->arming == arming) w->set = false;
            }
            // A change (a reentrant count, a proclamation) is checked too, which sets it again.
            if (what != ZkWatched::unset) raise(a);
        });
    std::lock_guard lk(w->m);
    if (w->arming != arming) return;  // fired and set again meanwhile
    w->on = s;
    w->id = id;
}

void ZkStore::disarm(ZkOwnWatch& w) noexcept {
    std::shared_ptr<ZkSession> s;
    std::uint64_t id = 0;
    {
        std::lock_guard lk(w.m);
        if (!w.set) return;
        w.set = false;
        ++w.arming;
        s = w.on.lock();
        id = w.id;
    }
    if (s) s->unwatch(id);
}

void ZkStore::watch_own(ZkPlace& p) {
    if (p.node.empty() || !p.session) return;
    if (p.watch) disarm(*p.watch);
    p.watch = std::make_shared<ZkOwnWatch>();
    arm(p.watch, p.session, p.node);
}

Status ZkStore::session(std::shared_ptr<ZkSession>& out) {
    return sessions_->any(out);
}

Status ZkStore::session_for(std::chrono::milliseconds ttl, std::shared_ptr<ZkSession>& out) {
    return sessions_->of_ttl(ttl, out);
}

std::chrono::milliseconds ZkStore::longest_ttl() const {
    return sessions_->longest();
}

Status ZkStore::supports(const LockSpec& spec) const {
    std::string why;
    for (const auto& name :
         spec.shape == Shape::multi ? spec.names : std::vector<std::string>{spec.name})
        if (znode_of(name, why).empty()) return Status::error(errc::invalid_argument, why);
    const auto& o = spec.options;
    if (Status st = sessions_->admits(o.ttl); !st.ok()) return st;
    if (!o.auto_renew || o.max_hold.count() > 0)
        return Status::error(
            errc::invalid_argument,
            "on ZooKeeper a lock lives as long as the session that holds it: a holding that "
            "ends by itself (auto_renew off, max_hold) would need a session of its own, which "
            "deadbolt does not open yet; release it instead");
    if (o.lock_delay.count() > 0)
        return Status::error(
            errc::invalid_argument,
            "lock_delay cannot be kept on ZooKeeper: the ensemble deletes an expired "
            "session's nodes at once, so the next contender holds at that moment");
    return {};
}

Status ZkStore::refusal(std::string_view what) const {
    if (what == FencedData::kWhat)
        return Status::error(
            errc::invalid_argument,
            "fenced data is not offered on ZooKeeper: write the data with "
            "Lease::put_if_current, which checks the lock in the same multi, or keep fenced "
            "data on Redis, etcd, PostgreSQL or MariaDB");
    if (what != RateLimits::kWhat) return Store::refusal(what);
    return Status::error(
        errc::invalid_argument,
        fmt::format("deadbolt's ZooKeeper backend does not offer {} (it offers Mutex, "
                    "FairMutex, RWLock, ReentrantMutex, Semaphore, PermitExpirableSemaphore, "
                    "MultiLock, CountDownLatch and LeaderElection): {} is offered on Redis (one "
                    "server, Sentinel or Cluster; not redlock://), PostgreSQL and MariaDB",
                    what, what));
}

std::unique_ptr<Claim> ZkStore::open(const LockSpec& spec, std::stop_token cancel) {
    if (spec.shape == Shape::permits)
        return std::make_unique<ZkPermitClaim>(*this, spec, std::move(cancel));
    if (spec.shape == Shape::multi)
        return std::make_unique<ZkMultiClaim>(*this, spec, std::move(cancel));
    return std::make_unique<ZkClaim>(*this, spec, std::move(cancel));
}

Status ZkStore::make_dirs(ZkSession& s, const std::string& dir, Clock::time_point by) {
    for (auto slash = dir.find('/', 1);; slash = dir.find('/', slash + 1)) {
        auto part = dir.substr(0, slash);
        auto r = s.create(part, "", ZOO_CONTAINER, by);
        if (!r.ok() && r.rc != ZNODEEXISTS)
            return s.fail(r, fmt::format("creating the lock's znode '{}'", part), true);
        if (slash == std::string::npos) return {};
    }
}

Status ZkStore::put_in_line(ZkPlace& p, const std::string& dir, const std::string& prefix,
                            std::string_view data, const std::string& what, Clock::time_point by,
                            std::optional<ZkReply>& listed) {
    ZkSession& s = *p.session;
    if (p.sent) {  // the reply of our create was lost: our node may be in line
        if (Status st = find_own_node(s, dir, p.guid, by, p.node, p.czxid); !st.ok()) return st;
        if (!p.node.empty()) return {};
    }
    auto path = dir + "/" + prefix;
    p.sent = true;
    // The line is read right behind the create: an uncontended grant costs one round trip.
    auto [r, line] = s.create_and_list(path, data, ZOO_EPHEMERAL_SEQUENTIAL, dir, by);
    if (r.rc == ZNONODE) {  // the line's znode (or a parent) is missing: make it, once
        if (Status st = make_dirs(s, dir, by); !st.ok()) return st;
        std::tie(r, line) = s.create_and_list(path, data, ZOO_EPHEMERAL_SEQUENTIAL, dir, by);
    }
    if (!r.ok()) return s.fail(r, what, true);
    p.node = r.path;
    p.czxid = r.stat.czxid;
    if (line.ok()) listed = std::move(line);
    return {};
}

Status ZkStore::find_own_node(ZkSession& s, const std::string& dir, const std::string& guid,
                              Clock::time_point by, std::string& node, std::int64_t& czxid) {
    node.clear();
    const std::string what = fmt::format("looking for our node in '{}' after a lost reply", dir);
    // The server may not have applied our create yet (another server, a new leader): it
    // catches up first, or the node would turn up after we looked and stay in line for as
    // long as our session lives.
    if (Status st = s.sync(dir, by, what); !st.ok()) return st;
    auto r = s.children(dir, by);
    if (r.rc == ZNONODE) return {};
    if (!r.ok()) return s.fail(r, what, false);
    auto line = in_line(r.children);
    auto i = find_own(line, guid);
    if (!i) return {};
    // A node of an older session is never taken as ours.
    auto found = dir + "/" + line[*i].name;
    auto st = s.exists(found, by);
    if (st.rc == ZNONODE) return {};
    if (!st.ok()) return s.fail(st, what, false);
    if (st.stat.ephemeralOwner != s.id()) return {};
    node = std::move(found);
    czxid = st.stat.czxid;
    return {};
}

Verdict ZkStore::look_at_holds(const ZkHolding& h, Clock::time_point by) {
    // A reentrant node may be another client's (its owner id joined it there): ours while it
    // counts holds of our owner, whichever session keeps it. Its deletion, once seen, ends our
    // hold too.
    if (h.watch && h.watch->gone) return Verdict::no();
    std::shared_ptr<ZkSession> s;
    if (Status st = session(s); !st.ok()) return Verdict::unknown(std::move(st));
    auto r = s->get(h.node, by);
    if (r.rc == ZNONODE) return Verdict::no();
    if (!r.ok()) return Verdict::unknown(s->fail(r, "checking a holding", false));
    if (!holds_of(r.data, h.owner)) return Verdict::no();
    if (h.watch && h.session && !h.session->expired()) arm(h.watch, h.session, h.node);
    return Verdict::yes();
}

Verdict ZkStore::release_hold(const ZkHolding& h, Clock::time_point by) {
    if (h.watch) disarm(*h.watch);  // our own change of the node is no news
    std::shared_ptr<ZkSession> s;
    if (Status st = session(s); !st.ok()) return Verdict::unknown(std::move(st));
    auto what = fmt::format("releasing '{}'", h.node);
    for (int round = 0; round < 3; ++round) {
        auto now = s->get(h.node, by);
        if (now.rc == ZNONODE) return Verdict::no();
        if (!now.ok()) return Verdict::unknown(s->fail(now, what, false));
        auto holds = holds_of(now.data, h.owner);
        if (!holds) return Verdict::no();
        // One hold goes; the node with the last.
        auto r = *holds > 1
                     ? s->set(h.node, reentrant_value(*holds - 1, h.owner), now.stat.version, by)
                     : s->remove(h.node, by, now.stat.version);
        if (r.ok()) return Verdict::yes();
        if (r.rc != ZBADVERSION && r.rc != ZNONODE) return Verdict::unknown(s->fail(r, what, true));
    }
    return Verdict::unknown(Status::error(
        errc::unknown_outcome, fmt::format("'{}' kept changing while releasing it", h.node)));
}

namespace {

// A holding of parts answers as its parts do together: a check is lost when one part is (its
// lock is gone, whatever the others say); a release is in doubt while one part is, so that
// its cleanup comes back for it.
template <class One>
Verdict of_parts(const ZkHolding& h, bool lost_wins, One one) {
    Verdict out = Verdict::yes();
    for (const auto& part : h.parts) {
        auto v = one(*part);
        bool worse = v.is == Verdict::Is::no        ? lost_wins || out.is == Verdict::Is::yes
                     : v.is == Verdict::Is::unknown ? !lost_wins || out.is == Verdict::Is::yes
                                                    : false;
        if (worse) out = std::move(v);
    }
    return out;
}

}  // namespace

Verdict ZkStore::look_at(const ZkHolding& h, Clock::time_point by) {
    if (!h.parts.empty())
        return of_parts(h, true, [&](const ZkHolding& part) { return look_at(part, by); });
    if (!h.owner.empty() && !h.node.empty()) return look_at_holds(h, by);
    // An expired session's nodes are gone, and so is a node whose deletion was seen: no
    // question to ask (a sequential node's path is never made again).
    if (!h.session || h.session->expired() || (h.watch && h.watch->gone)) return Verdict::no();
    if (h.node.empty()) {  // a create whose reply was lost: ours if it is there
        std::string node;
        std::int64_t czxid = 0;
        if (Status st = find_own_node(*h.session, h.dir, h.guid, by, node, czxid); !st.ok())
            return Verdict::unknown(std::move(st));
        return node.empty() ? Verdict::no() : Verdict::yes();
    }
    auto r = h.session->exists(h.node, by);
    if (r.rc == ZNONODE) return Verdict::no();
    if (!r.ok()) return Verdict::unknown(h.session->fail(r, "checking a holding", false));
    if (r.stat.ephemeralOwner != h.session->id()) return Verdict::no();
    if (h.watch) arm(h.watch, h.session, h.node);  // again, once a change fired it
    return Verdict::yes();
}

std::vector<Verdict> ZkStore::extend(std::span<const Renewal> rs, Clock::time_point by) {
    // The session keeps every node; one read proves it alive now and the node still ours.
    std::vector<Verdict> out;
    out.reserve(rs.size());
    for (const auto& r : rs) out.push_back(look_at(as_zk(r.holding), by));
    return out;
}

std::vector<Verdict> ZkStore::check(std::span<const Holding* const> hs, Clock::time_point by) {
    std::vector<Verdict> out;
    out.reserve(hs.size());
    for (const auto* h : hs) out.push_back(look_at(as_zk(h), by));
    return out;
}

Verdict ZkStore::release_zk(const ZkHolding& h, Clock::time_point by) {
    if (!h.parts.empty())
        return of_parts(h, false, [&](const ZkHolding& part) { return release_zk(part, by); });
    if (!h.owner.empty() && !h.node.empty()) return release_hold(h, by);
    if (h.watch) disarm(*h.watch);  // our own deletion is no loss
    if (!h.session || h.session->expired()) return Verdict::no();
    std::string node = h.node;
    std::int64_t czxid = 0;
    if (node.empty())
        if (Status st = find_own_node(*h.session, h.dir, h.guid, by, node, czxid); !st.ok())
            return Verdict::unknown(std::move(st));
    if (node.empty()) return Verdict::no();
    auto r = h.session->remove(node, by);
    return r.ok() ? Verdict::yes()
           : r.rc == ZNONODE
               ? Verdict::no()
               : Verdict::unknown(h.session->fail(r, fmt::format("deleting '{}'", node), true));
}

std::vector<Verdict> ZkStore::release(std::span<const Holding* const> hs, Clock::time_point by) {
    std::vector<Verdict> out;
    out.reserve(hs.size());
    for (const auto* one : hs) out.push_back(release_zk(as_zk(one), by));
    return out;
}

Status ZkStore::ping() {
    std::shared_ptr<ZkSession> s;
    if (Status st = session(s); !st.ok()) return st;
    auto r = s->exists("/", deadline());
    return r.ok() ? Status{} : s->fail(r, "answering a ping", false);
}

}  // namespace deadbolt::detail
