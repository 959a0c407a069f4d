#include "backends/mariadb/url.hpp"

#include <fmt/format.h>

#include <vector>

namespace deadbolt::detail {
namespace {

constexpr std::string_view kForm =
    "expected mysql://[user[:password]@]host[:port]/database[?opt=v&...] (or mariadb://)";

MyUrl fail(std::string why) {
    MyUrl u;
    u.error = std::move(why);
    return u;
}

std::string apply_option(std::string_view k, const std::string& v, MyUrl& u) {
    if (std::string err; common_option(k, v, u.options, err)) return err;
    return fmt::format(
        "unknown MariaDB URL option '{}': known options are connect_timeout, command_timeout, "
        "user, password",
        k);
}

}  // namespace

MyUrl parse_my_url(std::string_view url, const ClientOptions& base) {
    MyUrl u;
    u.options = base;
    std::string_view rest;
    if (url.starts_with("mysql://"))
        rest = url.substr(8);
    else if (url.starts_with("mariadb://"))
        rest = url.substr(10);
    else
        return fail(fmt::format("'{}': {}", url, kForm));
    std::string_view query;
    if (auto q = rest.find('?'); q != std::string_view::npos) {
        query = rest.substr(q + 1);
        rest = rest.substr(0, q);
    }
    auto slash = rest.find('/');
    if (slash == std::string_view::npos || slash + 1 == rest.size())
        return fail(
            fmt::format("'{}' names no database, where deadbolt keeps its fence "
                        "sequence: {}",
                        url, kForm));
    if (!percent_decode(rest.substr(slash + 1), u.database) ||
        u.database.find_first_of("/`'\"\\") != std::string::npos || u.database.size() > 64)
        return fail(
            fmt::format("'{}': the database name must be 1 to 64 characters without "
                        "quotes, '/' or '\\'",
                        url));
    std::vector<HostPort> servers;
    if (auto why = parse_authority(rest.substr(0, slash), url, kMyPort, servers, u.options.username,
                                   u.options.password);
        !why.empty())
        return fail(std::move(why));
    if (servers.size() != 1)
        return fail(fmt::format("'{}' names {} servers; deadbolt talks to one MariaDB server", url,
                                servers.size()));
    u.server = servers.front();
    if (auto err = each_query_option(
            query, [&](std::string_view k, const std::string& v) { return apply_option(k, v, u); });
        !err.empty())
        return fail(std::move(err));
    if (u.options.tls.enabled || !u.options.tls.ca_file.empty())
        return fail("TLS to MariaDB is not supported by deadbolt yet");
    u.ok = true;
    return u;
}

}  // namespace deadbolt::detail
