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

// Options as Redis and etcd name them (rediss://...?ca=&cert=&key=&verify=), with tls=1 for
// the scheme a MariaDB URL lacks.
std::string apply_option(std::string_view k, const std::string& v, MyUrl& u) {
    if (std::string err; common_option(k, v, u.options, err)) return err;
    auto& tls = u.options.tls;
    auto boolean = [&](bool& dst) -> std::string {
        if (v != "0" && v != "1") return fmt::format("option {} must be 0 or 1, not '{}'", k, v);
        dst = v == "1";
        return "";
    };
    if (k == "tls") return u.tls_asked = true, boolean(tls.enabled);
    if (k == "ca") return tls.ca_file = v, "";
    if (k == "cert") return tls.cert_file = v, "";
    if (k == "key") return tls.key_file = v, "";
    if (k == "verify") return u.verify_asked = true, boolean(tls.verify);
    return fmt::format(
        "unknown MariaDB URL option '{}': known options are connect_timeout, command_timeout, "
        "user, password, tls, ca, cert, key, verify",
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
    auto& tls = u.options.tls;
    bool files = !tls.ca_file.empty() || !tls.cert_file.empty() || !tls.key_file.empty();
    // A CA or a client certificate asks for TLS; tls=0 beside them is a contradiction.
    if (files && u.tls_asked && !tls.enabled)
        return fail(fmt::format("'{}' sets tls=0 and also ca, cert or key: drop one", url));
    if (files) tls.enabled = true;
    if (u.verify_asked && !tls.enabled)
        return fail(fmt::format("'{}' sets verify without TLS: add tls=1", url));
    if (tls.cert_file.empty() != tls.key_file.empty())
        return fail("a TLS client certificate needs both cert= and key=");
    u.ok = true;
    return u;
}

}  // namespace deadbolt::detail
