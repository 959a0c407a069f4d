// CountDownLatch on Redis: a counter key that expires, and a message on "<key>:opened" when
// the count reaches zero (an expiry opens it without one: waiters wake at the expiry too).
#include "backends/redis/keys.hpp"
#include "backends/redis/replies.hpp"
#include "backends/redis/scripts.hpp"
#include "backends/redis/store.hpp"
#include "backends/redis/waker.hpp"

namespace deadbolt::detail {
namespace {

// Without opening messages (a cluster's message node down): look again this often.
constexpr std::chrono::milliseconds kUnarmedRecheck{1000};

}  // namespace

Status RedisStore::latch_set(const std::string& name, std::int64_t count,
                             std::chrono::milliseconds ttl, bool& set) {
    std::string n = std::to_string(count), px = std::to_string(ttl.count());
    Reply r;
    Status st = server->eval({&latch_set_script(), {key_of(name)}, {n, px}}, r, deadline());
    set = st.ok() && r.integer == 1;
    return st;
}

Status RedisStore::latch_count_down(const std::string& name, bool& opened) {
    std::string key = key_of(name);
    std::string channel = aux_key(key, "opened");
    Reply r;
    Status st = server->eval({&latch_count_down_script(), {key}, {channel}}, r, deadline());
    opened = st.ok() && r.type == Reply::Type::array && r.elements.size() == 2 &&
             r.elements[1].integer == 1;
    return st;
}

Status RedisStore::latch_count(const std::string& name, std::int64_t& count) {
    Reply r;
    auto key = key_of(name);
    count = 0;
    if (Status st = server->command(key, {"GET", key}, r, deadline()); !st.ok()) return st;
    std::uint64_t n = 0;
    if (r.is_nil()) return {};
    if (!to_u64(r, n))
        return Status::error(errc::wrong_type,
                             "latch '" + name + "' holds something that is not a count");
    count = static_cast<std::int64_t>(n);
    return {};
}

bool RedisStore::latch_wait(const std::string& name, const AcquireOptions& how) {
    std::string key = key_of(name);
    auto look = [&](Look& found) {
        std::vector<Reply> r;
        auto st = server->pipeline(key, {{"EXISTS", key}, {"PTTL", key}}, r, deadline());
        if (st.ok()) {
            found.done = r[0].integer == 0;
            found.ttl = std::chrono::milliseconds(r[1].integer < 0 ? -1 : r[1].integer);
        }
        return st;
    };
    return watch_channels(client, {aux_key(key, "opened")}, look, how, kUnarmedRecheck);
}

}  // namespace deadbolt::detail
