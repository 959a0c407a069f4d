// memcached:// URLs: the servers and options. Pure; no I/O.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/url_text.hpp"
#include "deadbolt/options.hpp"

namespace deadbolt::detail {

/// The port memcached serves on when the URL does not say.
constexpr std::uint16_t kMemcachedPort = 11211;

struct McUrl {
    bool ok = false;
    std::string error;              // what is wrong and what to write instead, when !ok
    std::vector<HostPort> servers;  // one server, or several that decide by majority
    ClientOptions options;          // prefix, timeouts
    bool allow_evictions = false;   // do not warn about a server that may evict locks
};

/// memcached://host[:port][,host[:port]...][/][?opt=v&...] on top of base. Options:
/// connect_timeout, command_timeout, prefix, allow_evictions. A server listed twice, a user
/// or password (memcached's ASCII protocol has no authentication), a path and unknown options
/// are errors.
McUrl parse_mc_url(std::string_view url, const ClientOptions& base);

}  // namespace deadbolt::detail
