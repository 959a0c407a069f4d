#include "backends/mariadb/names.hpp"

#include <openssl/evp.h>

#include <algorithm>

namespace deadbolt::detail {

std::string get_lock_name(std::string_view name) {
    constexpr std::string_view kOurs = "deadbolt:";
    bool plain = !name.empty() && name.size() <= 64 && !name.starts_with(kOurs) &&
                 std::all_of(name.begin(), name.end(), [](char c) {
                     return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                            std::string_view("-_.:/@#").find(c) != std::string_view::npos;
                 });
    if (plain) return std::string(name);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    EVP_Digest(name.data(), name.size(), md, &len, EVP_sha256(), nullptr);
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out(kOurs);
    for (unsigned i = 0; out.size() < 64 && i < len; ++i) {
        out += kHex[md[i] >> 4];
        if (out.size() < 64) out += kHex[md[i] & 15];
    }
    return out;
}

std::string hex_literal(std::string_view bytes) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out = "X'";
    for (unsigned char c : bytes) out += kHex[c >> 4], out += kHex[c & 15];
    return out + "'";
}

std::string hash_expression(std::string_view bytes) {
    return "UNHEX(SHA2(" + hex_literal(bytes) + ", 256))";
}

std::string quoted(std::string_view lock_name) {
    return "'" + std::string(lock_name) + "'";
}

}  // namespace deadbolt::detail
