// Connecting a Client to memcached (memcached://).
#pragma once

#include <string_view>

#include "deadbolt/client.hpp"

namespace deadbolt::detail {

/// A client of the memcached servers url names: each is asked its clock and version, and
/// whether it may evict (a warning when it may). Throws UsageError for a bad URL or a server
/// older than 1.6, ConnectionError when too few servers answer.
Client connect_mc(std::string_view url, const ClientOptions& options);

}  // namespace deadbolt::detail
