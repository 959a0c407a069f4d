#include "backends/redis/specs.hpp"

#include <algorithm>

#include "backends/redis/keys.hpp"

namespace deadbolt::detail {
namespace {

std::string ms(std::chrono::milliseconds d) {
    return std::to_string(d.count());
}

RedisSpec base(std::string_view prefix, std::string_view name, const MutexOptions& o) {
    RedisSpec s;
    s.name = std::string(name);
    s.ttl = o.ttl;
    s.waiter_ttl = o.waiter_ttl;
    std::string main = std::string(prefix) + std::string(name);
    s.channel = aux_key(main, "released");
    s.keys = {main, aux_key(main, "fence")};
    return s;
}

// A kind that waits in the name's line: the line ends its acquire's KEYS, the box its args,
// and a waiter that gives up leaves the line (abandon).
void lines_up(RedisSpec& s) {
    s.line = aux_key(s.keys[0], "waiters");
    s.keys.push_back(s.line);
    s.args.push_back(s.channel);
    // The one woken ahead of it has had a fifth of a waiter's time to come, or never will.
    s.standby = std::max(s.waiter_ttl / 5, std::chrono::milliseconds(1));
    s.abandon = &leave_line_script();
    s.abandon_keys = {s.keys[0], s.line};
    s.abandon_args = {s.channel, s.channel};
}

// Both sides of an RWLock use KEYS: lock, fence, readers, claim, line.
RedisSpec rwlock_base(std::string_view prefix, std::string_view name, const MutexOptions& o) {
    RedisSpec s = base(prefix, name, o);
    const std::string main = s.keys[0];
    s.keys.push_back(aux_key(main, "readers"));
    s.keys.push_back(aux_key(main, "claim"));
    return s;
}

// op_keys with `line` swapped for `by` (RedisSpec::lineless_keys).
std::vector<std::string> without(const std::vector<std::string>& op_keys, const std::string& line,
                                 const std::string& by) {
    auto out = op_keys;
    std::replace(out.begin(), out.end(), line, by);
    return out;
}

}  // namespace

RedisSpec mutex_spec(std::string_view prefix, std::string_view name, const MutexOptions& o) {
    RedisSpec s = base(prefix, name, o);
    s.script = &acquire_script();
    s.kind = &mutex_kind();
    lines_up(s);
    s.op_keys = {s.keys[0], s.line};
    s.lease_keys = {s.keys[0]};
    s.lineless_keys = without(s.op_keys, s.line, s.keys[0]);
    s.queue_key = s.keys[0];
    return s;
}

RedisSpec fair_spec(std::string_view prefix, std::string_view name, const MutexOptions& o) {
    RedisSpec s = base(prefix, name, o);
    const std::string main = s.keys[0];
    s.keys.push_back(aux_key(main, "queue"));
    s.keys.push_back(aux_key(main, "alive"));
    s.grant_prefix = aux_key(main, "granted") + ":";
    s.script = &fair_acquire_script();
    s.args = {ms(o.waiter_ttl), s.grant_prefix};
    s.kind = &fair_kind();
    s.op_keys = s.keys;
    s.lease_keys = s.keys;
    s.op_keys.push_back(aux_key(main, "waiters"));  // a release with no FairMutex waiter
                                                    // wakes another kind's, in line
    s.lineless_keys = without(s.op_keys, s.op_keys.back(), main);
    auto fence_px = o.ttl + o.lock_delay + std::chrono::minutes(1);
    s.op_args = {ms(o.waiter_ttl), ms(fence_px), s.grant_prefix};
    s.queue_key = main;
    s.refresh = o.waiter_ttl / 3;
    s.abandon = fair_kind().release;  // a waiter that is not the holder leaves the queue
    s.abandon_keys = s.op_keys;
    return s;
}

RedisSpec write_spec(std::string_view prefix, std::string_view name, const MutexOptions& o) {
    RedisSpec s = rwlock_base(prefix, name, o);
    s.script = &write_acquire_script();
    s.args = {ms(o.waiter_ttl)};
    s.kind = &mutex_kind();
    lines_up(s);
    s.op_keys = {s.keys[0], s.line};
    s.lease_keys = {s.keys[0]};
    s.lineless_keys = without(s.op_keys, s.line, s.keys[0]);
    s.queue_key = s.keys[0];
    s.refresh = o.waiter_ttl / 3;
    s.abandon = &write_abandon_script();  // drops its claim too
    s.abandon_keys = {s.keys[3], s.keys[0], s.line};
    s.abandon_args = {};
    return s;
}

RedisSpec read_spec(std::string_view prefix, std::string_view name, const MutexOptions& o) {
    RedisSpec s = rwlock_base(prefix, name, o);
    s.script = &read_acquire_script();
    s.fenced = false;
    s.kind = &zset_holder_kind();
    lines_up(s);
    s.role = 'r';
    s.op_keys = {s.keys[2], s.line, s.keys[0]};  // the readers, the line, the name's key
    s.lease_keys = {s.keys[2], s.keys[0]};
    s.lineless_keys = without(s.op_keys, s.line, s.keys[0]);
    s.op_args = {"last"};  // writers wait for the last reader only
    return s;
}

RedisSpec reentrant_spec(std::string_view prefix, std::string_view name, const MutexOptions& o,
                         std::string_view owner) {
    RedisSpec s = base(prefix, name, o);
    s.script = &reentrant_acquire_script();
    s.args = {"again"};  // "fresh": this client does not hold it, whatever the server says
    s.kind = &reentrant_kind();
    lines_up(s);
    s.op_keys = {s.keys[0], s.line};
    s.lease_keys = {s.keys[0]};
    s.lineless_keys = without(s.op_keys, s.line, s.keys[0]);
    s.owner = std::string(owner);
    return s;
}

RedisSpec semaphore_spec(std::string_view prefix, std::string_view name, const MutexOptions& o,
                         int permits) {
    RedisSpec s = base(prefix, name, o);
    s.keys[1] = aux_key(s.keys[0], "limit");
    s.script = &semaphore_acquire_script();
    s.args = {std::to_string(permits)};
    s.fenced = false;
    s.kind = &zset_holder_kind();
    lines_up(s);
    s.op_keys = {s.keys[0], s.line, s.keys[1]};  // permits, line, limit
    s.lease_keys = {s.keys[0], s.keys[1]};
    s.lineless_keys = without(s.op_keys, s.line, s.keys[1]);
    s.op_args = {"each"};  // any release frees a permit for a waiter
    return s;
}

RedisSpec multi_spec(std::string_view prefix, const std::vector<std::string>& names,
                     const MutexOptions& o) {
    RedisSpec s = base(prefix, names.empty() ? std::string() : names.front(), o);
    if (names.empty()) return s;  // refused by the acquire loop's name check
    s.keys.clear();
    s.names = names;
    std::vector<std::string> lines, boxes;
    for (const auto& name : names) {
        std::string key = std::string(prefix) + name;
        std::string box = aux_key(key, "released");
        lines.push_back(aux_key(key, "waiters"));
        boxes.push_back(box);
        s.keys.push_back(key);
        s.keys.push_back(aux_key(key, "fence"));
        s.op_keys.push_back(key);
        s.op_keys.push_back(lines.back());
        s.lease_keys.push_back(key);
        s.lineless_keys.push_back(key);
        s.lineless_keys.push_back(key);
        s.op_args.push_back(box);  // one per key: the lock's and its line's
        s.op_args.push_back(box);
    }
    s.keys.insert(s.keys.end(), lines.begin(), lines.end());
    s.args = boxes;
    s.channel = boxes.front();
    s.extra_channels.assign(boxes.begin() + 1, boxes.end());
    s.line = lines.front();
    s.standby = std::max(o.waiter_ttl / 5, std::chrono::milliseconds(1));
    s.script = &multi_acquire_script();
    s.kind = &multi_kind();
    s.abandon = &leave_line_script();
    s.abandon_keys = s.op_keys;
    s.abandon_args = s.op_args;
    return s;
}

std::string observe_channel(std::string_view prefix, std::string_view name) {
    return aux_key(std::string(prefix) + std::string(name), "leader");
}

RedisSpec election_spec(std::string_view prefix, std::string_view name, const MutexOptions& o,
                        std::string_view value) {
    RedisSpec s = base(prefix, name, o);
    std::string observe = observe_channel(prefix, name);
    s.script = &campaign_script();
    s.args = {std::string(value), observe};
    s.kind = &leader_kind();
    lines_up(s);
    s.op_keys = {s.keys[0], s.line};
    s.lease_keys = {s.keys[0]};
    s.lineless_keys = without(s.op_keys, s.line, s.keys[0]);
    s.op_args = {observe};
    s.queue_key = s.keys[0];
    return s;
}

RedisSpec redis_spec(std::string_view prefix, const LockSpec& spec) {
    const MutexOptions& o = spec.options;
    switch (spec.shape) {
        case Shape::exclusive:
            break;
        case Shape::fair:
            return fair_spec(prefix, spec.name, o);
        case Shape::write:
            return write_spec(prefix, spec.name, o);
        case Shape::read:
            return read_spec(prefix, spec.name, o);
        case Shape::reentrant: {
            RedisSpec s = reentrant_spec(prefix, spec.name, o, spec.owner);
            s.reentry = spec.reentry;
            if (spec.leftover_is_new) s.args.front() = "fresh";
            return s;
        }
        case Shape::permits:
            return semaphore_spec(prefix, spec.name, o, spec.permits);
        case Shape::multi: {
            RedisSpec s = multi_spec(prefix, spec.names, o);
            s.name = spec.name;
            return s;
        }
        case Shape::leader:
            return election_spec(prefix, spec.name, o, spec.value);
    }
    return mutex_spec(prefix, spec.name, o);
}

}  // namespace deadbolt::detail
