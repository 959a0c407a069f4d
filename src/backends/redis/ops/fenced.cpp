// Fenced data on Redis: the guarded value, the highest fence accepted for it and its version,
// checked and written by one script, so a stale holder's write is refused atomically.
#include "backends/redis/keys.hpp"
#include "backends/redis/replies.hpp"
#include "backends/redis/scripts.hpp"
#include "backends/redis/store.hpp"

namespace deadbolt::detail {
namespace {

// The guarded data lives in one place; Redlock's nodes are independent copies of nothing.
Status one_place(const Nodes& nodes) {
    if (!nodes.redlock()) return {};
    return Status::error(errc::invalid_argument,
                         "fenced writes over redlock:// would reach one node of several "
                         "independent ones: keep the fenced data on one server (or a Sentinel "
                         "group or Cluster) and use a Client connected there");
}

}  // namespace

Status RedisStore::fenced_get(std::string_view key, FencedValue& out) {
    if (Status st = one_place(*nodes); !st.ok()) return st;
    std::string record = fence_record_key(key), version = version_key(key);
    Reply r;
    if (Status st = server->eval({&fenced_get_script(), {key, record, version}, {}}, r, deadline());
        !st.ok())
        return st;
    if (r.type != Reply::Type::array || r.elements.size() != 2 ||
        !to_u64(r.elements[1], out.version))
        return Status::error(errc::protocol_error, "unexpected fenced_get reply");
    if (!r.elements[0].is_nil()) out.value = r.elements[0].str;
    return {};
}

Status RedisStore::fenced_write(std::string_view key, std::string_view value, std::uint64_t fence,
                                std::string_view version, FencedResult& out) {
    if (Status st = one_place(*nodes); !st.ok()) return st;
    std::string record = fence_record_key(key), versions = version_key(key);
    std::string f = std::to_string(fence);
    Reply r;
    if (Status st = server->eval(
            {&fenced_set_script(), {key, record, versions}, {f, value, version}}, r, deadline());
        !st.ok())
        return st;
    return parse_fenced(r, out.accepted, out.highest, out.version);
}

}  // namespace deadbolt::detail
