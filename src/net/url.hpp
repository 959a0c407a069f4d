// URL parsing: redis://, rediss://, unix:// into an Endpoint. Pure; no I/O.
#pragma once

#include <string>
#include <string_view>

#include "deadbolt/options.hpp"
#include "net/endpoint.hpp"

namespace deadbolt::detail {

struct UrlResult {
    bool ok = false;
    Endpoint endpoint;
    std::string error;  // what is wrong and what to write instead, when !ok
};

/// Parses url on top of base options (URL parts and query options override base).
/// Query options: connect_timeout, command_timeout, prefix, db, user, password, ca, cert,
/// key, sni, verify (0/1), keepalive (0/1). Unknown options are errors.
UrlResult parse_url(std::string_view url, const ClientOptions& base);

/// Decodes %XX escapes; false on a malformed escape.
bool percent_decode(std::string_view in, std::string& out);

}  // namespace deadbolt::detail
