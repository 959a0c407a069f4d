// mysql:// and mariadb:// URLs: the server, database and user. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/url_text.hpp"
#include "deadbolt/options.hpp"

namespace deadbolt::detail {

/// The port MariaDB and MySQL serve on when the URL does not say.
constexpr std::uint16_t kMyPort = 3306;

struct MyUrl {
    bool ok = false;
    std::string error;      // what is wrong and what to write instead, when !ok
    HostPort server;        // one server
    std::string database;   // where deadbolt keeps its fence sequence and names
    ClientOptions options;  // user, password, timeouts

    /// "host:port/database", for messages.
    std::string describe() const { return server.describe() + "/" + database; }
};

/// mysql://[user[:password]@]host[:port]/database[?opt=v&...] (also mariadb://) on top of
/// base. Options: connect_timeout, command_timeout, user, password. The database is needed
/// (deadbolt keeps its fence sequence there); unknown options and TLS are errors.
MyUrl parse_my_url(std::string_view url, const ClientOptions& base);

}  // namespace deadbolt::detail
