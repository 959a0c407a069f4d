// A semaphore's permits on memcached, by id (PermitExpirableSemaphore): each permit is a slot
// item holding its id; they are found by reading every slot in one round trip.
#include <fmt/format.h>

#include "backends/memcached/store.hpp"
#include "backends/memcached/wire.hpp"

namespace deadbolt::detail {
namespace {

// Reads every slot of key's first `permits` slots (value and CAS) in one round trip.
Status read_slots(McNodes& nodes, const McKeys& keys, int permits, Clock::time_point by,
                  McAnswer& out) {
    McRequest scan;
    for (int i = 0; i < permits; ++i) {
        scan.text += meta_request("mg", keys.slot(i), "v c t");
        ++scan.replies;
    }
    out = nodes.one(0, scan, by);
    return out.status;
}

// The largest permit count a name's slots are looked for under when it is not known.
constexpr int kSlotsLooked = 1024;

}  // namespace

Status McStore::find_permit(const std::string& name, std::string_view id, int& slot,
                            MetaReply& found) {
    slot = -1;
    McAnswer seen;
    if (Status st = read_slots(*nodes_, keys(name), kSlotsLooked, deadline(), seen); !st.ok())
        return st;
    for (std::size_t i = 0; i < seen.replies.size(); ++i)
        if (seen.replies[i].code == "VA" && seen.replies[i].value == id) {
            slot = static_cast<int>(i);
            found = std::move(seen.replies[i]);
            return {};
        }
    return {};
}

Status McStore::permit_release(const std::string& name, std::string_view id, bool& released) {
    released = false;
    int slot = -1;
    MetaReply r;
    if (Status st = find_permit(name, id, slot, r); !st.ok() || slot < 0) return st;
    auto gone = nodes_->one(
        0,
        {meta_request("md", keys(name).slot(slot), fmt::format("C{}", r.number('c').value_or(0))),
         1},
        deadline());
    if (!gone.status.ok()) return gone.status;
    released = gone.replies.front().code == "HD";
    return {};
}

Status McStore::permit_extend(const std::string& name, std::string_view id,
                              std::chrono::milliseconds keep, bool& extended) {
    extended = false;
    if (keep > kLongestMcKeep) return mc_keep_too_long(keep, "a permit's extension");
    int slot = -1;
    MetaReply r;
    if (Status st = find_permit(name, id, slot, r); !st.ok() || slot < 0) return st;
    auto set = nodes_->one(0,
                           {classic_store(keys(name).slot(slot), ttl_seconds(keep.count()), r.value,
                                          static_cast<std::uint64_t>(r.number('c').value_or(0))),
                            1},
                           deadline());
    if (!set.status.ok()) return set.status;
    extended = set.replies.front().code == "STORED";
    return {};
}

Status McStore::permits_in_use(const std::string& name, int permits, int& in_use) {
    in_use = 0;
    McAnswer seen;
    if (Status st = read_slots(*nodes_, keys(name), permits, deadline(), seen); !st.ok()) return st;
    for (const auto& r : seen.replies) in_use += r.code == "VA" ? 1 : 0;
    return {};
}

}  // namespace deadbolt::detail
