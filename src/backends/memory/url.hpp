// memory:// URLs: the space's name, and options. Pure; no I/O.
#pragma once

#include <string>
#include <string_view>

#include "deadbolt/options.hpp"

namespace deadbolt::detail {

struct MemoryUrl {
    bool ok = false;
    std::string error;      // what is wrong and what to write instead, when !ok
    std::string space;      // the NAME, %-decoded
    ClientOptions options;  // prefix, timeouts
};

/// memory://NAME[?prefix=...&command_timeout=...] on top of base. An empty NAME, a NUL in it,
/// users, passwords and unknown options are errors.
MemoryUrl parse_memory_url(std::string_view url, const ClientOptions& base);

/// What is wrong with a space's name (already decoded), or "".
std::string memory_name_error(std::string_view name);

}  // namespace deadbolt::detail
