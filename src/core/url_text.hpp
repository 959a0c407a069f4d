// Pieces of URL text every engine's URL parser needs. Pure; no I/O.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "deadbolt/options.hpp"

namespace deadbolt::detail {

/// Decodes %XX escapes; false on a malformed escape.
bool percent_decode(std::string_view in, std::string& out);

/// One server a URL names.
struct HostPort {
    std::string host;
    std::uint16_t port = 0;
    /// host:port, an IPv6 host in brackets.
    std::string describe() const;
};

/// A URL's authority, "[user:password@]host[:port][,host[:port]...]": its servers (port
/// default_port where none is given; IPv6 hosts in brackets) and, when given, the user and
/// password (%-decoded; a password may hold '@' only %-encoded). "" or what is wrong, naming
/// url.
std::string parse_authority(std::string_view authority, std::string_view url,
                            std::uint16_t default_port, std::vector<HostPort>& servers,
                            std::string& user, std::string& password);

/// Sets out to the duration text v names (e.g. 500ms, 2s) when it is one above zero: "" or
/// what is wrong with option key.
std::string positive_duration_option(std::string_view key, const std::string& v,
                                     std::chrono::milliseconds& out);

/// The options every engine's URL takes (connect_timeout, command_timeout, user, password):
/// when key is one of them, sets it in o and returns true, with what is wrong in err ("" when
/// nothing); false for any other key.
bool common_option(std::string_view key, const std::string& v, ClientOptions& o, std::string& err);

/// The query of an engine without users (file://, memory://): prefix, connect_timeout and
/// command_timeout into o; user and password refused saying no_users, anything else naming
/// scheme and the options there are. "" or what is wrong.
std::string userless_query_options(std::string_view query, ClientOptions& o,
                                   std::string_view scheme, std::string_view no_users);

/// Hands each k=v of a URL's query (v decoded) to apply, which returns "" or what is wrong;
/// returns the first thing wrong, or "".
std::string each_query_option(
    std::string_view query,
    const std::function<std::string(std::string_view key, const std::string& value)>& apply);

}  // namespace deadbolt::detail
