#include "core/url_text.hpp"

#include <fmt/format.h>

#include "deadbolt/duration.hpp"

namespace deadbolt::detail {
namespace {

int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

}  // namespace

bool percent_decode(std::string_view in, std::string& out) {
    out.clear();
    for (std::size_t i = 0; i < in.size(); ++i) {
        if (in[i] != '%') {
            out += in[i];
            continue;
        }
        if (i + 2 >= in.size()) return false;
        int hi = hexval(in[i + 1]), lo = hexval(in[i + 2]);
        if (hi < 0 || lo < 0) return false;
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
    }
    return true;
}

std::string positive_duration_option(std::string_view key, const std::string& v,
                                     std::chrono::milliseconds& out) {
    std::string why;
    auto d = parse_duration(v, &why);
    if (!d) return fmt::format("option {}: {}", key, why);
    if (d->count() == 0) return fmt::format("option {} must be greater than 0", key);
    out = *d;
    return {};
}

std::string each_query_option(
    std::string_view query,
    const std::function<std::string(std::string_view key, const std::string& value)>& apply) {
    while (!query.empty()) {
        auto amp = query.find('&');
        std::string_view pair = query.substr(0, amp);
        query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
        if (pair.empty()) continue;
        auto eq = pair.find('=');
        if (eq == std::string_view::npos)
            return fmt::format("URL option '{}' has no value: write {}=VALUE", pair, pair);
        std::string value;
        if (!percent_decode(pair.substr(eq + 1), value))
            return fmt::format("bad %-escape in URL option '{}'", pair);
        if (auto err = apply(pair.substr(0, eq), value); !err.empty()) return err;
    }
    return {};
}

}  // namespace deadbolt::detail
