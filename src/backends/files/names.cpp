#include "backends/files/names.hpp"

#include <openssl/evp.h>

#include "core/url_text.hpp"

namespace deadbolt::detail {
namespace {

constexpr std::string_view kSuffix = ".lock";
// NAME_MAX is 255 on Linux's file systems: room for the suffix and a temporary's tag.
constexpr std::size_t kLongest = 240;

bool kept(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == ':' || c == '@' || c == '-';
}

}  // namespace

std::string lock_file_name(std::string_view prefix, std::string_view name) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    const std::string full = std::string(prefix) + std::string(name);
    std::string coded;
    for (std::size_t i = 0; i < full.size(); ++i) {
        auto c = static_cast<unsigned char>(full[i]);
        if (kept(c) && !(i == 0 && c == '.')) {
            coded += static_cast<char>(c);
        } else {
            coded += '%';
            coded += kHex[c >> 4];
            coded += kHex[c & 15];
        }
    }
    if (coded.size() > kLongest) {
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned len = 0;
        EVP_Digest(full.data(), full.size(), md, &len, EVP_sha256(), nullptr);
        coded = "~h~";
        for (unsigned i = 0; i < len; ++i) {
            coded += static_cast<char>(std::tolower(kHex[md[i] >> 4]));
            coded += static_cast<char>(std::tolower(kHex[md[i] & 15]));
        }
    }
    return coded + std::string(kSuffix);
}

std::optional<std::string> name_of_lock_file(std::string_view prefix, std::string_view file) {
    if (!file.ends_with(kSuffix)) return std::nullopt;
    file.remove_suffix(kSuffix.size());
    if (file.starts_with("~h~")) return std::string(file);
    std::string full;
    if (!percent_decode(file, full) || !full.starts_with(prefix)) return std::nullopt;
    return full.substr(prefix.size());
}

}  // namespace deadbolt::detail
