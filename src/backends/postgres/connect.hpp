// The PostgreSQL backend's entry: a Client on postgresql:// (and postgres://) URLs.
#pragma once

#include <string_view>

#include "deadbolt/client.hpp"

namespace deadbolt::detail {

/// Connects now (so a wrong password, a missing database or missing rights are reported
/// here) and makes deadbolt's schema when it is missing.
Client connect_pg(std::string_view url, const ClientOptions& options);

}  // namespace deadbolt::detail
