#include "backends/memcached/keys.hpp"

#include <openssl/evp.h>

#include "backends/memcached/wire.hpp"

namespace deadbolt::detail {
namespace {

// Room kept beside a coded name for the longest side key's tag ("~p99999~").
constexpr std::size_t kTagRoom = 8;

bool plain(std::string_view s) {
    for (unsigned char c : s)
        if (c <= 0x20 || c >= 0x7f) return false;
    return true;
}

}  // namespace

bool mc_prefix_ok(std::string_view prefix) {
    return plain(prefix) && prefix.size() <= 64;
}

McKeys mc_keys(std::string_view prefix, std::string_view name) {
    McKeys k{std::string(prefix), {}};
    const std::size_t room = kMaxKeyBytes - prefix.size() - kTagRoom;
    if (!name.empty() && name.front() != '~' && plain(name) && name.size() <= room) {
        k.coded = std::string(name);
        return k;
    }
    if (4 * ((name.size() + 2) / 3) + 3 <= room) {
        k.coded = "~b~" + base64(name);
        return k;
    }
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    EVP_Digest(name.data(), name.size(), md, &len, EVP_sha256(), nullptr);
    static constexpr char kHex[] = "0123456789abcdef";
    k.coded = "~h~";
    for (unsigned i = 0; i < len; ++i) {
        k.coded += kHex[md[i] >> 4];
        k.coded += kHex[md[i] & 15];
    }
    return k;
}

std::optional<std::string> mc_name_of(std::string_view prefix, std::string_view key) {
    if (!key.starts_with(prefix)) return std::nullopt;
    key.remove_prefix(prefix.size());
    if (key.starts_with("~b~")) return unbase64(key.substr(3));
    if (key.starts_with("~h~")) return std::string(key);
    if (key.starts_with("~")) return std::nullopt;  // a fence or a slot
    return std::string(key);
}

}  // namespace deadbolt::detail
