// Pieces of URL text every engine's URL parser needs. Pure; no I/O.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace deadbolt::detail {

/// Decodes %XX escapes; false on a malformed escape.
bool percent_decode(std::string_view in, std::string& out);

/// One member of a host list: host[:port] or [v6][:port] (port kept when absent): "" or what
/// is wrong with it.
std::string parse_host_port(std::string_view text, std::string& host, std::uint16_t& port);

/// host:port, an IPv6 host in brackets.
std::string host_port_text(const std::string& host, std::uint16_t port);

/// Splits "user:password" (each %-decoded) into user and password: "" or what is wrong
/// (no ':', a bad escape), naming url.
std::string parse_userinfo(std::string_view userinfo, std::string_view url, std::string& user,
                           std::string& password);

/// Sets out to the duration text v names (e.g. 500ms, 2s) when it is one above zero: "" or
/// what is wrong with option key.
std::string positive_duration_option(std::string_view key, const std::string& v,
                                     std::chrono::milliseconds& out);

/// Hands each k=v of a URL's query (v decoded) to apply, which returns "" or what is wrong;
/// returns the first thing wrong, or "".
std::string each_query_option(
    std::string_view query,
    const std::function<std::string(std::string_view key, const std::string& value)>& apply);

}  // namespace deadbolt::detail
