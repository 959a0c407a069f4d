// Connecting a Client to a memory space (memory://NAME).
#pragma once

#include <string_view>

#include "deadbolt/client.hpp"

namespace deadbolt::detail {

/// A client of the memory space url names (made when nobody uses it). Unless options set a
/// clock, the client measures its leases on the space's (memory::Space::advance moves it).
/// Throws UsageError for a bad URL.
Client connect_memory(std::string_view url, const ClientOptions& options);

}  // namespace deadbolt::detail
