#include "backends/redis/specs.hpp"

#include "backends/redis/keys.hpp"

namespace deadbolt::detail {
namespace {

std::string ms(std::chrono::milliseconds d) {
    return std::to_string(d.count());
}

RedisSpec base(std::string_view prefix, std::string_view name, const MutexOptions& o) {
    RedisSpec s;
    s.name = std::string(name);
    s.options = o;
    std::string main = std::string(prefix) + std::string(name);
    s.channel = aux_key(main, "released");
    s.keys = {main, aux_key(main, "fence")};
    return s;
}

// Both sides of an RWLock use KEYS: lock, fence, readers, claim.
RedisSpec rwlock_base(std::string_view prefix, std::string_view name, const MutexOptions& o) {
    RedisSpec s = base(prefix, name, o);
    const std::string main = s.keys[0];
    s.keys.push_back(aux_key(main, "readers"));
    s.keys.push_back(aux_key(main, "claim"));
    return s;
}

}  // namespace

RedisSpec mutex_spec(std::string_view prefix, std::string_view name, const MutexOptions& o) {
    RedisSpec s = base(prefix, name, o);
    s.script = &acquire_script();
    s.kind = &mutex_kind();
    s.op_keys = {s.keys[0]};
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
    auto fence_px = o.ttl + o.lock_delay + std::chrono::minutes(1);
    s.op_args = {ms(o.waiter_ttl), ms(fence_px), s.grant_prefix};
    s.queue_key = main;
    s.refresh = o.waiter_ttl / 3;
    s.abandon = fair_kind().release;  // a waiter that is not the holder leaves the queue
    s.abandon_keys = s.keys;
    return s;
}

RedisSpec write_spec(std::string_view prefix, std::string_view name, const MutexOptions& o) {
    RedisSpec s = rwlock_base(prefix, name, o);
    s.script = &write_acquire_script();
    s.args = {ms(o.waiter_ttl)};
    s.kind = &mutex_kind();
    s.op_keys = {s.keys[0]};
    s.queue_key = s.keys[0];
    s.refresh = o.waiter_ttl / 3;
    s.abandon = &write_abandon_script();
    s.abandon_keys = {s.keys[3]};
    return s;
}

RedisSpec read_spec(std::string_view prefix, std::string_view name, const MutexOptions& o) {
    RedisSpec s = rwlock_base(prefix, name, o);
    s.script = &read_acquire_script();
    s.fenced = false;
    s.kind = &zset_holder_kind();
    s.op_keys = {s.keys[2], s.keys[0]};  // the readers, and the name's key they hold
    s.op_args = {"last"};                // writers wait for the last reader only
    return s;
}

RedisSpec reentrant_spec(std::string_view prefix, std::string_view name, const MutexOptions& o,
                         std::string_view owner) {
    RedisSpec s = base(prefix, name, o);
    s.script = &reentrant_acquire_script();
    s.args = {"again"};  // "fresh": this client does not hold it, whatever the server says
    s.kind = &reentrant_kind();
    s.op_keys = {s.keys[0]};
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
    s.op_keys = s.keys;
    s.op_args = {"each"};  // any release frees a permit for a waiter
    return s;
}

RedisSpec multi_spec(std::string_view prefix, const std::vector<std::string>& names,
                     const MutexOptions& o) {
    RedisSpec s = base(prefix, names.empty() ? std::string() : names.front(), o);
    if (names.empty()) return s;  // refused by the acquire loop's name check
    s.keys.clear();
    s.names = names;
    for (const auto& name : names) {
        std::string key = std::string(prefix) + name;
        s.keys.push_back(key);
        s.keys.push_back(aux_key(key, "fence"));
        s.op_keys.push_back(key);
        s.op_args.push_back(aux_key(key, "released"));
    }
    s.channel = s.op_args.front();
    s.extra_channels.assign(s.op_args.begin() + 1, s.op_args.end());
    s.script = &multi_acquire_script();
    s.kind = &multi_kind();
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
    s.op_keys = {s.keys[0]};
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
            if (spec.leftover_is_new) s.args = {"fresh"};
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
