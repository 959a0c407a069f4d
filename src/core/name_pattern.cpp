#include "core/name_pattern.hpp"

#include <fnmatch.h>

namespace deadbolt::detail {

bool name_matches(std::string_view pattern, const std::string& name) {
    if (pattern == "*") return true;
    const std::string pat(pattern);
    return name.find('\0') == std::string::npos && ::fnmatch(pat.c_str(), name.c_str(), 0) == 0;
}

}  // namespace deadbolt::detail
