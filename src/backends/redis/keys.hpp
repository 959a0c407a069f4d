// Keys: where a lock and its auxiliary state live. Pure; unit-tested without a server.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace deadbolt::detail {

/// Redis Cluster hash slot of key (CRC16/XMODEM mod 16384, honouring {hash tags}).
std::uint16_t key_slot(std::string_view key);

/// True when keys (strings or views) do not all hash to one cluster slot.
template <class Keys>
bool spans_slots(const Keys& keys) {
    auto it = keys.begin();
    if (it == keys.end()) return false;
    const auto first = key_slot(*it);
    for (; it != keys.end(); ++it)
        if (key_slot(*it) != first) return true;
    return false;
}

/// True if key has a non-empty {hash tag}, which alone decides its slot.
bool has_hash_tag(std::string_view key);

/// A short string whose slot is `slot` (for tagging keys that cannot be wrapped).
std::string slot_tag(std::uint16_t slot);

/// An auxiliary key in main's slot: main + ":" + suffix when main has a hash tag,
/// "{" + main + "}:" + suffix when main has no '}', else "{" + slot_tag + "}" + main + ":" +
/// suffix.
std::string aux_key(std::string_view main, std::string_view suffix);

/// True when key is an auxiliary key some lock keeps beside its own (aux_key of a known
/// suffix), so a listing of locks skips it. A lock whose own name has that shape (a hash-tagged
/// "x:fence") is taken for one: the two cannot be told apart.
bool is_aux_key(std::string_view key);

/// s with the glob characters of Redis MATCH (*, ?, [, ], \) escaped, to match s literally.
std::string glob_escape(std::string_view s);

/// The keys of one lock.
struct LockKeys {
    std::string lock;     // prefix + name: holds the owner token (redis-py compatible)
    std::string fence;    // last fencing token handed out
    std::string channel;  // pub/sub channel announcing releases
};

LockKeys lock_keys(std::string_view prefix, std::string_view name);

/// Every key any kind keeps under a name, in the order status and force_unlock take them:
/// main, fence, queue, readers, claim, limit, waiters (the line, lua/line.cpp).
std::vector<std::string> every_key_of(std::string_view prefix, std::string_view name);

/// Where fenced_set keeps the highest fence a data key has seen.
inline std::string fence_record_key(std::string_view data_key) {
    return aux_key(data_key, "deadbolt-fence");
}
/// Where fenced writes count the writes a data key has taken (its version).
inline std::string version_key(std::string_view data_key) {
    return aux_key(data_key, "deadbolt-version");
}

}  // namespace deadbolt::detail
