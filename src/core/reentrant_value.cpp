#include "core/reentrant_value.hpp"

#include <fmt/format.h>

#include <charconv>

namespace deadbolt::detail {

std::string reentrant_value(std::int64_t holds, std::string_view owner) {
    return fmt::format("{} {}", holds, owner);
}

std::optional<std::pair<std::int64_t, std::string_view>> parse_reentrant(std::string_view value) {
    auto space = value.find(' ');
    if (space == std::string_view::npos) return std::nullopt;
    std::int64_t holds = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + space, holds);
    if (ec != std::errc() || end != value.data() + space || holds < 1) return std::nullopt;
    return std::pair{holds, value.substr(space + 1)};
}

std::optional<std::int64_t> holds_of(std::string_view value, std::string_view owner) {
    auto r = parse_reentrant(value);
    if (!r || r->second != owner) return std::nullopt;
    return r->first;
}

}  // namespace deadbolt::detail
