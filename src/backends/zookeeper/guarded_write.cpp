// A write guarded by a ZooKeeper holding (Lease::put_if_current): one multi that checks every
// node of the holding still exists and writes the data node, as ZooKeeper's recipes advise.
// A sequential node's path is never made again, so "it exists" means "it is still ours".
#include <fmt/format.h>

#include "backends/zookeeper/paths.hpp"
#include "backends/zookeeper/store.hpp"

namespace deadbolt::detail {
namespace {

// The nodes that prove h ours, and the session they are on; false when one is unknown (a
// create whose reply was lost) or its session ended.
bool nodes_of(const ZkHolding& h, std::vector<std::string>& out,
              std::shared_ptr<ZkSession>& session) {
    if (h.parts.empty()) {
        out.push_back(h.node);
        if (!session) session = h.session;
        return !h.node.empty() && h.session && !h.session->expired();
    }
    for (const auto& part : h.parts)
        if (!nodes_of(*part, out, session)) return false;
    return true;
}

}  // namespace

Status ZkStore::put_if_held(const Holding& held, std::string_view key, std::string_view value,
                            Clock::time_point by, bool& put) {
    put = false;
    std::string why;
    auto path = znode_of(key, why);
    if (path.empty()) return Status::error(errc::invalid_argument, "put_if_current: " + why);
    std::vector<std::string> nodes;
    std::shared_ptr<ZkSession> session;
    if (!nodes_of(as_zk(&held), nodes, session)) return {};
    ZkSession& s = *session;
    const std::string what = fmt::format("a write to '{}' guarded by the lock", key);
    bool create = false;
    for (int round = 0; round < 4; ++round) {
        auto r = s.write_if_present(nodes, path, value, create, by);
        if (r.ok()) {
            put = true;
            return {};
        }
        if (r.each.size() != nodes.size() + 1) return s.fail(r, what, true);
        for (std::size_t i = 0; i < nodes.size(); ++i)
            if (r.each[i] != ZOK) return {};  // a node of the holding is gone: not ours
        int target = r.each.back();
        if (target == ZNONODE && !create) {
            create = true;  // the data node is new
        } else if (target == ZNODEEXISTS) {
            create = false;              // made meanwhile: write over it
        } else if (target == ZNONODE) {  // its parent is missing
            auto parent = path.substr(0, path.rfind('/'));
            if (Status st = parent.empty() ? Status{} : make_dirs(s, parent, by); !st.ok())
                return st;
        } else {
            return s.fail(r, what, true);
        }
    }
    return Status::error(errc::unknown_outcome,
                         fmt::format("'{}' kept changing while writing it", key));
}

}  // namespace deadbolt::detail
