#include "backends/postgres/keys.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <functional>
#include <memory>
#include <string>

namespace deadbolt::detail {

namespace {

std::int64_t digest_key(std::string_view name) {
    // Every acquisition hashes its name: the algorithm is fetched once and each thread keeps a
    // context, where EVP_Digest(..., EVP_sha256()) looks the algorithm up and allocates again.
    static EVP_MD* const sha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    thread_local const std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(
        EVP_MD_CTX_new(), &EVP_MD_CTX_free);
    constexpr std::string_view kPrefix = "deadbolt:";
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    if (!sha256 || !ctx || !EVP_DigestInit_ex2(ctx.get(), sha256, nullptr) ||
        !EVP_DigestUpdate(ctx.get(), kPrefix.data(), kPrefix.size()) ||
        !EVP_DigestUpdate(ctx.get(), name.data(), name.size()) ||
        !EVP_DigestFinal_ex(ctx.get(), md, &len)) {
        std::string text(kPrefix);  // the same digest the slow way
        text += name;
        EVP_Digest(text.data(), text.size(), md, &len, EVP_sha256(), nullptr);
    }
    std::uint64_t k = 0;
    for (int i = 0; i < 8; ++i) k = (k << 8) | md[i];
    return static_cast<std::int64_t>(k);
}

}  // namespace

std::int64_t advisory_key(std::string_view name) {
    // A thread takes the same few names again and again: their digests are kept, a few per
    // thread (hashing was a ninth of an uncontended cycle's instructions).
    struct Known {
        std::string name;
        std::int64_t key = 0;
        bool set = false;
    };
    if (name.size() > 256) return digest_key(name);  // a thread keeps no long names
    thread_local std::array<Known, 16> known;
    Known& k = known[std::hash<std::string_view>{}(name) % known.size()];
    if (!k.set || k.name != name) {
        k.key = digest_key(name);
        k.name.assign(name);
        k.set = true;
    }
    return k.key;
}

std::vector<std::int64_t> sorted_keys(std::span<const std::string> names) {
    std::vector<std::int64_t> keys;
    keys.reserve(names.size());
    for (const auto& n : names) keys.push_back(advisory_key(n));
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    return keys;
}

std::string bytea_literal(std::string_view bytes) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out = "'\\x";
    for (unsigned char c : bytes) out += kHex[c >> 4], out += kHex[c & 15];
    return out + "'::bytea";
}

std::string bytea_value(std::string_view text) {
    if (!text.starts_with("\\x") || text.size() % 2 != 0) return {};
    auto nibble = [](char c) {
        return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    };
    std::string out;
    for (std::size_t i = 2; i < text.size(); i += 2) {
        int hi = nibble(text[i]), lo = nibble(text[i + 1]);
        if (hi < 0 || lo < 0) return {};
        out += static_cast<char>(hi << 4 | lo);
    }
    return out;
}

}  // namespace deadbolt::detail
