// Which lock names a `list` pattern selects. Pure.
#pragma once

#include <string>
#include <string_view>

namespace deadbolt::detail {

/// Whether name matches the glob pattern (fnmatch): "*" matches every name, and a name with a
/// NUL byte (which a pattern cannot spell) matches nothing else.
bool name_matches(std::string_view pattern, const std::string& name);
/// The same without copying the pattern (fnmatch needs it NUL-terminated): for a hot path.
bool name_matches(const std::string& pattern, const std::string& name);

}  // namespace deadbolt::detail
