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
    std::string error;          // what is wrong and what to write instead, when !ok
    HostPort server;            // one server
    std::string database;       // where deadbolt keeps its fence sequence and names
    ClientOptions options;      // user, password, timeouts, TLS
    bool tls_asked = false;     // the URL said tls=0 or tls=1
    bool verify_asked = false;  // the URL said verify=

    /// "host:port/database", for messages.
    std::string describe() const { return server.describe() + "/" + database; }
};

/// mysql://[user[:password]@]host[:port]/database[?opt=v&...] (also mariadb://) on top of
/// base. Options: connect_timeout, command_timeout, user, password, and TLS: tls=1 (the server
/// is verified against the system's CAs and must name the URL's host), ca=FILE (verify
/// against this CA instead; implies tls=1), cert=FILE and key=FILE (a client certificate;
/// imply tls=1), verify=0 (no checks of the server: tests only). The database is needed
/// (deadbolt keeps its fence sequence there); unknown options are errors.
MyUrl parse_my_url(std::string_view url, const ClientOptions& base);

}  // namespace deadbolt::detail
