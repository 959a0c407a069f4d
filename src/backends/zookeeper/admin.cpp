// What a client sees and does without holding on ZooKeeper: listing the locks under the
// chroot, and freeing one whatever holds it.
#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <set>
#include <vector>

#include "backends/zookeeper/paths.hpp"
#include "backends/zookeeper/store.hpp"
#include "core/name_pattern.hpp"

namespace deadbolt::detail {
namespace {

// Nodes visited at most by one listing: a chroot with more is listed in part, and says so.
constexpr std::size_t kMaxVisited = 100000;

}  // namespace

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
    // semaphore's leases and its gate's line go alike.
    auto dirs = kind == "semaphore" ? std::vector<std::string>{fmt::format("{}/{}", dir, kLeases),
                                                               fmt::format("{}/{}", dir, kGate)}
                                    : std::vector<std::string>{dir};
    for (const auto& d : dirs) {
        auto r = s->children(d, deadline());
        if (r.rc == ZNONODE) continue;
        if (!r.ok()) return s->fail(r, fmt::format("reading '{}'", name), false);
        for (const auto& c : in_line(r.children)) {
            auto gone = s->remove(d + "/" + c.name, deadline());
            if (!gone.ok() && gone.rc != ZNONODE)
                return s->fail(gone, fmt::format("deleting '{}/{}'", d, c.name), true);
        }
    }
    return {};
}

}  // namespace deadbolt::detail
