#include "metrics/openmetrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "deadbolt/error.hpp"

#include "core/name_pattern.hpp"

namespace deadbolt::detail {

std::string label_value(std::string_view v) {
    std::string out;
    for (char c : v) {
        if (c == '\\' || c == '"') out += '\\';
        out += c == '\n' ? std::string("\\n") : std::string(1, c);
    }
    return out;
}

std::size_t pattern_index(const std::vector<std::string>& patterns, const std::string& name) {
    for (std::size_t i = 0; i < patterns.size(); ++i)
        if (name_matches(patterns[i], name)) return i;
    return patterns.size();
}

void check_name_patterns(const std::vector<std::string>& patterns, std::string_view who) {
    for (auto it = patterns.begin(); it != patterns.end(); ++it)
        if (*it == "other" || std::find(patterns.begin(), it, *it) != it)
            throw UsageError(
                make_error_code(errc::invalid_argument),
                fmt::format("{}: the name pattern '{}' is given twice or is 'other' (the label of "
                            "names no pattern matches): two series would share its labels, and "
                            "Prometheus would refuse the whole scrape",
                            who, *it));
}

std::string name_label(const std::vector<std::string>& patterns, std::size_t g) {
    if (patterns.empty()) return {};
    return fmt::format(",name=\"{}\"", label_value(g < patterns.size() ? patterns[g] : "other"));
}

void family(std::string& out, std::string_view name, std::string_view type, std::string_view unit,
            std::string_view help) {
    fmt::format_to(std::back_inserter(out), "# TYPE {} {}\n", name, type);
    if (!unit.empty()) fmt::format_to(std::back_inserter(out), "# UNIT {} {}\n", name, unit);
    fmt::format_to(std::back_inserter(out), "# HELP {} {}\n", name, help);
}

}  // namespace deadbolt::detail
