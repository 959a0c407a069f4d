// file:// URLs: the directory whose files keep the locks, and options. Pure; no I/O.
#pragma once

#include <string>
#include <string_view>

#include "deadbolt/options.hpp"

namespace deadbolt::detail {

struct FileUrl {
    bool ok = false;
    std::string error;      // what is wrong and what to write instead, when !ok
    std::string dir;        // absolute, without a trailing '/'
    ClientOptions options;  // prefix, timeouts
};

/// file:///absolute/dir[?prefix=...] (also file://localhost/dir) on top of base. Options:
/// prefix, connect_timeout, command_timeout. A relative path, another host and unknown
/// options are errors.
FileUrl parse_file_url(std::string_view url, const ClientOptions& base);

}  // namespace deadbolt::detail
