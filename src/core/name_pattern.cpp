#include "core/name_pattern.hpp"

#include <fnmatch.h>

namespace deadbolt::detail {

bool name_matches(std::string_view pattern, const std::string& name) {
    return name_matches(std::string(pattern), name);
}

bool name_matches(const std::string& pattern, const std::string& name) {
    if (pattern == "*") return true;
    return name.find('\0') == std::string::npos && ::fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
}

}  // namespace deadbolt::detail
