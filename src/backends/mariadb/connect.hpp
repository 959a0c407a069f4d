// The MariaDB backend's entry: a Client on mysql:// and mariadb:// URLs.
#pragma once

#include <string_view>

#include "deadbolt/client.hpp"

namespace deadbolt::detail {

/// Connects now (so a wrong password, a missing database or missing rights are reported
/// here) and makes deadbolt's fence sequence and names table when they are missing.
Client connect_my(std::string_view url, const ClientOptions& options);

}  // namespace deadbolt::detail
