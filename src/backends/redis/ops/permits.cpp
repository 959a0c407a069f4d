// Permits on Redis (Semaphore, PermitExpirableSemaphore): one zset member per permit, scored
// by its expiry, so a permit is released or extended by its id from any process.
#include "backends/redis/holding.hpp"
#include "backends/redis/specs.hpp"
#include "backends/redis/store.hpp"

namespace deadbolt::detail {
namespace {

// Runs script (a permit holding's release or extend) for permit id of name, held by anyone,
// and returns its integer reply in n.
Status permit_op(RedisStore& r, const std::string& name, const Script& script, std::string_view id,
                 std::chrono::milliseconds keep, long long& n) {
    auto h = RedisHolding::held(
        std::make_shared<const RedisSpec>(semaphore_spec(r.client.options.key_prefix, name, {}, 1)),
        std::string(id), keep);
    std::string px = std::to_string(keep.count());
    Reply reply;
    bool release = &script == zset_holder_kind().release;  // the one that wakes the line
    Status st = r.server->eval(release ? h->call(script, px) : h->lease_call(script, px), reply,
                               r.deadline());
    n = st.ok() ? reply.integer : 0;
    return st;
}

constexpr std::chrono::milliseconds kNothing{0};  // a release keeps nothing

}  // namespace

Status RedisStore::permit_release(const std::string& name, std::string_view id, bool& released) {
    long long n = 0;
    Status st = permit_op(*this, name, *zset_holder_kind().release, id, kNothing, n);
    released = n >= 1;
    return st;
}

Status RedisStore::permit_extend(const std::string& name, std::string_view id,
                                 std::chrono::milliseconds keep, bool& extended) {
    long long n = 0;
    Status st = permit_op(*this, name, *zset_holder_kind().extend, id, keep, n);
    extended = n == 1;
    return st;
}

Status RedisStore::permits_in_use(const std::string& name, int /*permits*/, int& in_use) {
    // The sorted set holds holders only (waiters do not queue in it).
    Reply r;
    Status st = server->eval({&zset_live_count_script(), {key_of(name)}, {}}, r, deadline());
    in_use = st.ok() ? static_cast<int>(r.integer) : 0;
    return st;
}

}  // namespace deadbolt::detail
