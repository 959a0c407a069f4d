// postgresql:// URLs: the server(s), database, role, and where deadbolt keeps its objects.
// Pure.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/url_text.hpp"
#include "deadbolt/options.hpp"

namespace deadbolt::detail {

/// The port PostgreSQL serves on when the URL does not say.
constexpr std::uint16_t kPgPort = 5432;

struct PgUrl {
    bool ok = false;
    std::string error;                // what is wrong and what to write instead, when !ok
    std::vector<HostPort> servers;    // libpq tries them in order (target_session_attrs)
    std::string database;             // "" = the user's name, as libpq does
    std::string schema = "deadbolt";  // where the fence sequence and tables live
    std::vector<std::pair<std::string, std::string>> libpq;  // passed through (sslmode, ...)
    ClientOptions options;                                   // user, password, timeouts

    /// libpq's keywords and values for one connection (its own timeouts off: deadbolt keeps
    /// the deadlines).
    std::vector<std::pair<std::string, std::string>> keywords() const;
    /// "host:port,..." and the database, for messages.
    std::string describe() const;
};

/// postgresql://[user[:password]@]host[:port][,host[:port]...][/database][?opt=v&...] (also
/// postgres://) on top of base. Options: schema, connect_timeout, command_timeout, user,
/// password, and libpq's sslmode, sslrootcert, sslcert, sslkey, target_session_attrs,
/// application_name. Unknown options are errors.
PgUrl parse_pg_url(std::string_view url, const ClientOptions& base);

}  // namespace deadbolt::detail
