#include "deadbolt/duration.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <limits>

namespace deadbolt {
namespace {

bool fail(std::string* why, std::string msg) {
    if (why) *why = std::move(msg);
    return false;
}

// Microseconds per unit; longest unit names first so "ms" is not read as "m".
struct Unit {
    std::string_view name;
    std::int64_t us;
};
constexpr Unit kUnits[] = {{"us", 1},       {"ms", 1000},        {"s", 1000000},
                           {"m", 60000000}, {"h", 3600000000LL}, {"d", 86400000000LL}};

}  // namespace

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text, std::string* why) {
    if (text.empty()) return fail(why, "empty duration: write e.g. 500ms, 30s, 5m"), std::nullopt;
    std::int64_t total_us = 0;
    std::size_t i = 0;
    while (i < text.size()) {
        std::int64_t n = 0;
        std::size_t start = i;
        while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
            if (n > (std::numeric_limits<std::int64_t>::max() - 9) / 10) {
                fail(why, fmt::format("duration '{}' is too large", text));
                return std::nullopt;
            }
            n = n * 10 + (text[i++] - '0');
        }
        // A fraction ("1.5s"): up to 9 digits, scaled once the unit is known.
        std::int64_t frac = 0, frac_scale = 1;
        if (i < text.size() && text[i] == '.' && i > start) {
            ++i;
            while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
                if (frac_scale < 1000000000) {
                    frac = frac * 10 + (text[i] - '0');
                    frac_scale *= 10;
                }
                ++i;
            }
        }
        if (i == start) {
            fail(why, fmt::format("'{}' is not a duration: write a non-negative number with a "
                                  "unit, e.g. 500ms, 30s, 5m",
                                  text));
            return std::nullopt;
        }
        std::size_t unit_start = i;
        while (i < text.size() && (text[i] < '0' || text[i] > '9')) ++i;
        std::string_view unit = text.substr(unit_start, i - unit_start);
        if (unit.empty()) {
            fail(why, fmt::format("duration '{}' has no unit: write e.g. {}s or {}ms", text,
                                  text.substr(start), text.substr(start)));
            return std::nullopt;
        }
        const Unit* found = nullptr;
        for (const auto& u : kUnits)
            if (u.name == unit) found = &u;
        if (!found) {
            fail(why, fmt::format("unknown unit '{}' in duration '{}': use us, ms, s, m, h or d",
                                  unit, text));
            return std::nullopt;
        }
        if (n > (std::numeric_limits<std::int64_t>::max() - total_us) / found->us) {
            fail(why, fmt::format("duration '{}' is too large", text));
            return std::nullopt;
        }
        total_us += n * found->us + frac * found->us / frac_scale;
    }
    // Round up so "1us" is not silently zero.
    return std::chrono::milliseconds((total_us + 999) / 1000);
}

std::string format_duration(std::chrono::milliseconds d) {
    auto ms = d.count();
    if (ms < 0) return fmt::format("-{}", format_duration(-d));
    if (ms < 1000) return fmt::format("{}ms", ms);
    if (ms < 60000) return fmt::format("{:.1f}s", static_cast<double>(ms) / 1000.0);
    if (ms < 3600000) return fmt::format("{}m{:02}s", ms / 60000, (ms / 1000) % 60);
    return fmt::format("{}h{:02}m", ms / 3600000, (ms / 60000) % 60);
}

}  // namespace deadbolt
