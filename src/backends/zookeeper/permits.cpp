// A semaphore's permits by id on ZooKeeper (PermitExpirableSemaphore): a permit is a lease
// node under "<name>/leases" whose data starts with the permit's id (holder_data). It lives as long
// as its holder's session: extending one only tells whether it is still held.
#include <fmt/format.h>

#include <algorithm>

#include "backends/zookeeper/paths.hpp"
#include "backends/zookeeper/store.hpp"

namespace deadbolt::detail {
namespace {

// The lease node of name whose data is id ("" when none is); reads each lease once.
Status find_permit(ZkSession& s, const std::string& leases, std::string_view id,
                   Clock::time_point by, std::string& node) {
    node.clear();
    auto kids = s.children(leases, by);
    if (kids.rc == ZNONODE) return {};
    if (!kids.ok()) return s.fail(kids, "looking for a permit", false);
    for (const auto& c : in_line(kids.children)) {
        auto one = s.get(leases + "/" + c.name, by);
        if (one.rc == ZNONODE) continue;
        if (!one.ok()) return s.fail(one, "looking for a permit", false);
        if (parse_holder_data(one.data).token == id) {
            node = leases + "/" + c.name;
            return {};
        }
    }
    return {};
}

}  // namespace

std::string ZkStore::leases_of(const std::string& name) {
    std::string why;
    auto dir = znode_of(name, why);
    return dir.empty() ? dir : fmt::format("{}/{}", dir, kLeases);
}

Status ZkStore::semaphore_status(ZkSession& s, const std::string& dir, LockStatus& ls) {
    const auto leases_dir = fmt::format("{}/{}", dir, kLeases);
    auto leases = s.children(leases_dir, deadline());
    auto gate = s.children(fmt::format("{}/{}", dir, kGate), deadline());
    for (const auto* r : {&leases, &gate})
        if (!r->ok() && r->rc != ZNONODE) return s.fail(*r, "reading a semaphore's state", false);
    auto held = in_line(leases.children);
    auto line = in_line(gate.children);
    // The gate's holder has made its lease, or is about to: it waits for one to go.
    constexpr std::size_t kGuid = 36;
    if (!line.empty() && line.front().name.starts_with("_c_"))
        if (auto i = find_own(held, line.front().name.substr(3, kGuid)))
            held.erase(held.begin() + static_cast<std::ptrdiff_t>(*i));
    ls.kind = "semaphore";
    ls.held = !held.empty();
    ls.holders = static_cast<int>(held.size());
    ls.waiters = static_cast<int>(line.size());
    ls.ttl = std::chrono::milliseconds(-1);  // each lease lives as long as its holder's session
    for (int k = 0; k < std::min(ls.holders, kMaxListedHolders); ++k) {
        const auto& child = held[static_cast<std::size_t>(k)].name;
        auto one = s.get(fmt::format("{}/{}", leases_dir, child), deadline());
        if (one.rc == ZNONODE) continue;  // it left meanwhile
        if (!one.ok()) return s.fail(one, "reading a semaphore's holder", false);
        auto holder = holder_of(child, one.data);
        ls.session_timeout = std::max(ls.session_timeout, holder.session_timeout);
        ls.held_by.push_back(std::move(holder.who));
    }
    return {};
}

Status ZkStore::permit_release(const std::string& name, std::string_view id, bool& released) {
    released = false;
    std::shared_ptr<ZkSession> s;
    if (Status st = session(s); !st.ok()) return st;
    std::string node;
    if (Status st = find_permit(*s, leases_of(name), id, deadline(), node);
        !st.ok() || node.empty())
        return st;
    auto r = s->remove(node, deadline());
    if (!r.ok() && r.rc != ZNONODE) return s->fail(r, "releasing a permit", true);
    released = r.ok();
    return {};
}

Status ZkStore::permit_extend(const std::string& name, std::string_view id,
                              std::chrono::milliseconds /*keep*/, bool& extended) {
    // Its holder's session keeps it, for as long as that session lives: nothing to set.
    std::shared_ptr<ZkSession> s;
    if (Status st = session(s); !st.ok()) return st;
    std::string node;
    Status st = find_permit(*s, leases_of(name), id, deadline(), node);
    extended = st.ok() && !node.empty();
    return st;
}

Status ZkStore::permits_in_use(const std::string& name, int permits, int& in_use) {
    in_use = 0;
    std::shared_ptr<ZkSession> s;
    if (Status st = session(s); !st.ok()) return st;
    auto kids = s->children(leases_of(name), deadline());
    if (kids.rc == ZNONODE) return {};
    if (!kids.ok()) return s->fail(kids, "counting permits", false);
    // A waiter's lease is counted among the leases until it gets its permit or goes.
    in_use = static_cast<int>(
        std::min<std::size_t>(kids.children.size(), static_cast<std::size_t>(permits)));
    return {};
}

}  // namespace deadbolt::detail
