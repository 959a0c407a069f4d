// What a client sees and does without holding on ZooKeeper: a lock's state (who holds it,
// how that holding ends, its fence), listing the locks under the chroot, and freeing one
// whatever holds it.
#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <set>
#include <vector>

#include "backends/zookeeper/paths.hpp"
#include "backends/zookeeper/store.hpp"
#include "core/name_pattern.hpp"
#include "core/reentrant_value.hpp"

namespace deadbolt::detail {
namespace {

// Nodes visited at most by one listing: a chroot with more is listed in part, and says so.
constexpr std::size_t kMaxVisited = 100000;

}  // namespace

Status ZkStore::statuses(const std::vector<std::string>& names,
                         std::vector<std::pair<LockStatus, Status>>& out) {
    std::shared_ptr<ZkSession> s;
    if (Status st = session(s); !st.ok()) return st;
    out.clear();
    for (const auto& name : names) {
        LockStatus ls;
        ls.kind = "free";
        std::string why;
        auto dir = znode_of(name, why);
        if (dir.empty()) {
            out.emplace_back(ls, Status::error(errc::invalid_argument, why));
            continue;
        }
        auto r = s->children(dir, deadline());
        if (!r.ok() && r.rc != ZNONODE) return s->fail(r, "reading a lock's state", false);
        if (is_semaphore(r.children)) {
            Status st = semaphore_status(*s, dir, ls);
            if (!st.ok()) return st;
            out.emplace_back(std::move(ls), Status{});
            continue;
        }
        auto line = in_line(r.children);
        if (!line.empty()) {
            // Readers at the head of the line hold together; anyone else holds alone.
            std::size_t readers = 0;
            while (readers < line.size() && is_reader(line[readers].name)) ++readers;
            ls.held = true;
            ls.kind = readers > 0 ? "readers" : "mutex";
            ls.holders = static_cast<int>(std::max<std::size_t>(readers, 1));
            ls.waiters = static_cast<int>(line.size()) - ls.holders;
            ls.writer_waiting = readers > 0 && readers < line.size();
            // It lives as long as its holder's session: how much of that is left, no one can
            // tell; the session's timeout, its holder wrote in its node.
            ls.ttl = std::chrono::milliseconds(-1);
            for (int k = 0; k < std::min(ls.holders, kMaxListedHolders); ++k) {
                const auto& child = line[static_cast<std::size_t>(k)].name;
                auto one = s->get(fmt::format("{}/{}", dir, child), deadline());
                if (one.rc == ZNONODE) continue;  // it left meanwhile
                if (!one.ok()) return s->fail(one, "reading a lock's holder", false);
                if (k == 0 && readers == 0) {
                    // Shared holdings carry no fence (ARCHITECTURE 15); a lock's is its czxid.
                    ls.last_fence = static_cast<std::uint64_t>(one.stat.czxid);
                    if (parse_reentrant(one.data)) ls.kind = "reentrant";
                    if (is_candidate(child)) {  // its data is what it proclaims, not who it is
                        ls.kind = "leader";
                        ls.value = one.data;
                        continue;
                    }
                }
                auto held = holder_of(child, one.data);
                ls.session_timeout = std::max(ls.session_timeout, held.session_timeout);
                ls.held_by.push_back(std::move(held.who));
            }
        }
        out.emplace_back(std::move(ls), Status{});
    }
    return {};
}

Status ZkStore::lock_names(std::string_view pattern, std::vector<std::string>& names) {
    std::shared_ptr<ZkSession> s;
    if (Status st = session(s); !st.ok()) return st;
    // A lock is a znode with contenders among its children: a walk of the tree, leaving
    // ZooKeeper's own /zookeeper alone.
    std::deque<std::string> todo{"/"};
    std::set<std::string> semaphores;  // znodes with "leases" among their children
    std::size_t visited = 0;
    names.clear();
    while (!todo.empty()) {
        auto path = std::move(todo.front());
        todo.pop_front();
        if (++visited > kMaxVisited)
            return Status::error(errc::server_error,
                                 fmt::format("more than {} znodes under the chroot: list a "
                                             "narrower chroot",
                                             kMaxVisited));
        auto r = s->children(path, deadline());
        if (r.rc == ZNONODE) continue;
        if (!r.ok()) return s->fail(r, "listing locks", false);
        bool lock = false;
        if (is_semaphore(r.children)) semaphores.insert(path);
        for (const auto& c : r.children) {
            if (contender_seq(c)) {
                lock = true;
                continue;
            }
            if (path == "/" && c == "zookeeper") continue;
            std::string child = path == "/" ? std::string() : path;
            child += '/';
            child += c;
            todo.push_back(std::move(child));
        }
        if (!lock) continue;
        // A semaphore's gate and leases are the semaphore's.
        auto slash = path.rfind('/');
        auto last = std::string_view(path).substr(slash + 1);
        if ((last == kLeases || last == kGate) && semaphores.contains(path.substr(0, slash)))
            path.resize(slash);
        auto name = name_of_znode(path);
        if (name_matches(pattern, name)) names.push_back(std::move(name));
    }
    std::ranges::sort(names);
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return {};
}

Status ZkStore::force_unlock(const std::string& name, std::string& kind) {
    std::shared_ptr<ZkSession> s;
    if (Status st = session(s); !st.ok()) return st;
    std::vector<std::pair<LockStatus, Status>> now;
    if (Status st = statuses({name}, now); !st.ok()) return st;
    if (!now.front().second.ok()) return now.front().second;
    kind = now.front().first.kind;
    std::string why;
    auto dir = znode_of(name, why);
    // Every contender goes, waiters too: each wakes (its watch fires) and queues again. A
    // semaphore's leases and its gate's line go alike. All in one multi: one deleted at a
    // time, a waiter woken by the first deletions could be granted before its own node went,
    // and lose that grant at once.
    auto dirs = kind == "semaphore" ? std::vector<std::string>{fmt::format("{}/{}", dir, kLeases),
                                                               fmt::format("{}/{}", dir, kGate)}
                                    : std::vector<std::string>{dir};
    for (int tries = 0;; ++tries) {
        std::vector<std::string> nodes;
        for (const auto& d : dirs) {
            auto r = s->children(d, deadline());
            if (r.rc == ZNONODE) continue;
            if (!r.ok()) return s->fail(r, fmt::format("reading '{}'", name), false);
            for (const auto& c : in_line(r.children)) nodes.push_back(d + "/" + c.name);
        }
        if (nodes.empty()) return {};
        auto gone = s->remove_all(nodes, deadline());
        if (gone.ok()) return {};
        // One went meanwhile (a release): read the line again.
        if (gone.rc != ZNONODE || tries == 10)
            return s->fail(gone, fmt::format("deleting the contenders of '{}'", name), true);
    }
}

}  // namespace deadbolt::detail
