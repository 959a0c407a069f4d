#include "backends/redis/keys.hpp"

#include <mutex>
#include <unordered_map>
#include <vector>

namespace deadbolt::detail {
namespace {

std::uint16_t crc16(std::string_view s) {
    std::uint16_t crc = 0;
    for (unsigned char c : s) {
        crc ^= static_cast<std::uint16_t>(c << 8);
        for (int i = 0; i < 8; ++i)
            crc = (crc & 0x8000) ? static_cast<std::uint16_t>((crc << 1) ^ 0x1021)
                                 : static_cast<std::uint16_t>(crc << 1);
    }
    return crc;
}

// The part of key that decides its slot: the first {...} if non-empty, else all of it.
std::string_view hash_part(std::string_view key) {
    auto open = key.find('{');
    if (open == std::string_view::npos) return key;
    auto close = key.find('}', open + 1);
    if (close == std::string_view::npos || close == open + 1) return key;
    return key.substr(open + 1, close - open - 1);
}

}  // namespace

std::uint16_t key_slot(std::string_view key) {
    return crc16(hash_part(key)) % 16384;
}

bool has_hash_tag(std::string_view key) {
    return hash_part(key).size() != key.size();
}

std::string slot_tag(std::uint16_t slot) {
    static std::mutex m;
    static std::unordered_map<std::uint16_t, std::string> cache;
    std::lock_guard lk(m);
    if (auto it = cache.find(slot); it != cache.end()) return it->second;
    // About 16k tries on average; cached, and only for names with a stray '}'.
    for (std::uint32_t i = 0;; ++i) {
        std::string s = "s" + std::to_string(i);
        if (key_slot(s) == slot) return cache[slot] = s;
    }
}

std::string aux_key(std::string_view main, std::string_view suffix) {
    std::string out;
    out.reserve(main.size() + suffix.size() + 12);
    if (has_hash_tag(main)) {
        out.append(main);
    } else if (main.find('}') == std::string_view::npos) {
        out += '{';
        out.append(main);
        out += '}';
    } else {
        // "{" + main + "}" would end the tag at main's own '}': pick a tag with main's slot.
        out += '{';
        out += slot_tag(key_slot(main));
        out += '}';
        out.append(main);
    }
    out += ':';
    out.append(suffix);
    return out;
}

bool is_aux_key(std::string_view key) {
    for (std::string_view suffix : {"fence", "queue", "readers", "claim", "limit", "alive",
                                    "waiters", "deadbolt-fence", "deadbolt-version"}) {
        if (key.size() <= suffix.size() + 1 || !key.ends_with(suffix) ||
            key[key.size() - suffix.size() - 1] != ':')
            continue;
        auto head = key.substr(0, key.size() - suffix.size() - 1);
        // aux_key's three shapes: the main key itself (it has a tag), "{main}", "{tag}main".
        std::vector<std::string_view> mains{head};
        if (head.size() > 2 && head.front() == '{' && head.back() == '}')
            mains.push_back(head.substr(1, head.size() - 2));
        if (auto close = head.find('}'); head.front() == '{' && close != std::string_view::npos)
            mains.push_back(head.substr(close + 1));
        for (auto main : mains)
            if (!main.empty() && aux_key(main, suffix) == key) return true;
    }
    return false;
}

std::string glob_escape(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char ch : s) {
        if (ch == '*' || ch == '?' || ch == '[' || ch == ']' || ch == '\\') out += '\\';
        out += ch;
    }
    return out;
}

LockKeys lock_keys(std::string_view prefix, std::string_view name) {
    LockKeys k;
    k.lock.reserve(prefix.size() + name.size());
    k.lock.append(prefix);
    k.lock.append(name);
    k.fence = aux_key(k.lock, "fence");
    k.channel = aux_key(k.lock, "released");
    return k;
}

std::vector<std::string> every_key_of(std::string_view prefix, std::string_view name) {
    std::string main = std::string(prefix) + std::string(name);
    std::vector<std::string> keys = {main};
    for (const char* suffix : {"fence", "queue", "readers", "claim", "limit", "waiters"})
        keys.push_back(aux_key(main, suffix));
    return keys;
}

}  // namespace deadbolt::detail
