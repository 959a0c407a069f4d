// LeaderElection on ZooKeeper, as Curator's LeaderLatch keeps it (so Java services campaign in
// the same election): a candidate is an ephemeral sequential "_c_<guid>-latch-<seq>" child
// whose data is what it proclaims; the lowest sequence leads, its czxid is the term.
#include <fmt/format.h>

#include <algorithm>

#include "backends/zookeeper/paths.hpp"
#include "backends/zookeeper/store.hpp"
#include "backends/zookeeper/wake.hpp"

namespace deadbolt::detail {

void ZkStore::add_term(const std::string& token, const std::shared_ptr<ZkHolding>& h) {
    std::lock_guard lk(terms_m_);
    std::erase_if(terms_, [](const auto& t) { return t.second.expired(); });
    terms_[token] = h;
}

Status ZkStore::proclaim(const std::string& name, const std::string& token, std::string_view value,
                         bool& ours) {
    std::shared_ptr<ZkHolding> h;
    {
        std::lock_guard lk(terms_m_);
        if (auto it = terms_.find(token); it != terms_.end()) h = it->second.lock();
    }
    ours = false;
    if (!h || h->node.empty() || !h->session || h->session->expired()) return {};
    // Our node's name is ours alone: while it exists, the term is ours.
    auto r = h->session->set(h->node, value, -1, deadline());
    if (r.rc == ZNONODE) return {};
    if (!r.ok()) return h->session->fail(r, fmt::format("proclaiming in '{}'", name), true);
    ours = true;
    return {};
}

namespace {

// The leader of dir now: the first candidate's data and czxid. head: its node ("" = none).
Status read_leader(ZkSession& s, const std::string& dir, Clock::time_point by, Leader& out,
                   std::string& head) {
    out = Leader{};
    head.clear();
    // The leader now, not as far as this server has caught up: a campaign another client saw
    // answered (through another server) must be seen here too.
    if (Status st = s.sync(dir, by, "reading an election"); !st.ok()) return st;
    for (int round = 0; round < 3; ++round) {
        auto kids = s.children(dir, by);
        if (kids.rc == ZNONODE) return {};
        if (!kids.ok()) return s.fail(kids, "reading an election", false);
        auto line = in_line(kids.children);
        if (line.empty()) return {};
        auto first = dir + "/" + line.front().name;
        auto r = s.get(first, by);
        if (r.rc == ZNONODE) continue;  // it just left: look again
        if (!r.ok()) return s.fail(r, "reading an election's leader", false);
        out.elected = true;
        out.value = r.data;
        out.term = static_cast<std::uint64_t>(r.stat.czxid);
        out.ttl = std::chrono::milliseconds(-1);  // it leads while its session lives
        head = first;
        return {};
    }
    return {};
}

}  // namespace

Status ZkStore::leader(const std::string& name, Leader& out) {
    std::shared_ptr<ZkSession> s;
    if (Status st = session(s); !st.ok()) return st;
    std::string why, head;
    auto dir = znode_of(name, why);
    if (dir.empty()) return Status::error(errc::invalid_argument, why);
    return read_leader(*s, dir, deadline(), out, head);
}

Leader ZkStore::observe(const std::string& name, const Leader& seen, const AcquireOptions& how) {
    std::string why;
    auto dir = znode_of(name, why);
    if (dir.empty()) Status::error(errc::invalid_argument, why).throw_if_error();
    auto wake = std::make_shared<ZkWake>();
    auto fired = [wake] { wake->fire(); };
    const auto until = how.deadline.value_or(Clock::time_point::max());
    Leader now;
    for (;;) {
        std::shared_ptr<ZkSession> s;
        session(s).throw_if_error();
        wake->reset();
        // The leader's node changes (a proclamation) or goes (a resignation, its session's
        // end); with nobody leading, the first candidate arrives among the children. Armed
        // before the look that decides, so no change in between is missed.
        std::string head;
        read_leader(*s, dir, deadline(), now, head).throw_if_error();
        if (!now.same_as(seen) || how.cancel.stop_requested() || Clock::now() >= until) return now;
        std::uint64_t id = 0;
        auto r = head.empty() ? s->watch_children(dir, deadline(), fired, id)
                              : s->watch(head, deadline(), fired, id);
        if (r.rc == ZNONODE && head.empty()) {  // no election yet: wait for its znode
            s->unwatch(id);
            r = s->watch(dir, deadline(), fired, id);
        }
        if (!r.ok() && r.rc != ZNONODE) {
            s->unwatch(id);
            s->fail(r, fmt::format("observing '{}'", name), false).throw_if_error();
        }
        Leader again;
        read_leader(*s, dir, deadline(), again, head).throw_if_error();
        // Bounded: the loop looks again anyway, and a far deadline must not overflow.
        if (again.same_as(seen))
            wake->wait(std::min(until, Clock::now() + std::chrono::hours(1)), how.cancel);
        s->unwatch(id);
    }
}

}  // namespace deadbolt::detail
