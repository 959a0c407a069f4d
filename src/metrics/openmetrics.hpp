// The pieces of the OpenMetrics text format that every family of ours is written with.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace deadbolt::detail {

/// v as a label value: backslash, double quote and newline escaped.
std::string label_value(std::string_view v);

/// The index of the first of patterns (globs) that name matches; patterns.size() ("other")
/// when none does.
std::size_t pattern_index(const std::vector<std::string>& patterns, const std::string& name);

/// Throws UsageError (its message starting with who) when a pattern is given twice or is
/// "other" (the label of names none matches): two series would share labels, and Prometheus
/// refuses the whole scrape then.
void check_name_patterns(const std::vector<std::string>& patterns, std::string_view who);

/// The `name` label of pattern group g (patterns[g], or "other" past them), with its leading
/// comma; empty when there are no patterns (no name label).
std::string name_label(const std::vector<std::string>& patterns, std::size_t g);

/// A family's metadata lines: TYPE, UNIT (when unit is not empty) and HELP.
void family(std::string& out, std::string_view name, std::string_view type, std::string_view unit,
            std::string_view help);

}  // namespace deadbolt::detail
