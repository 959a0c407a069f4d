#include "backends/postgres/url.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace deadbolt::detail {
namespace {

constexpr std::string_view kForm =
    "expected postgresql://[user[:password]@]host[:port][,host[:port]...][/database][?opt=v&...]";

// Passed to libpq as they are.
constexpr std::array<std::string_view, 6> kLibpq = {
    "sslmode", "sslrootcert", "sslcert", "sslkey", "target_session_attrs", "application_name"};

PgUrl fail(std::string why) {
    PgUrl u;
    u.error = std::move(why);
    return u;
}

// A schema name deadbolt quotes itself; kept to what needs no thought in psql either.
bool plain_identifier(const std::string& s) {
    if (s.empty() || s.size() > 63 || (s[0] >= '0' && s[0] <= '9')) return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    });
}

std::string apply_option(std::string_view k, const std::string& v, PgUrl& u) {
    if (std::string err; common_option(k, v, u.options, err)) return err;
    if (k == "schema") {
        if (!plain_identifier(v))
            return fmt::format(
                "schema '{}' must be 1 to 63 lowercase letters, digits or '_', not starting with "
                "a digit",
                v);
        return u.schema = v, "";
    }
    if (std::find(kLibpq.begin(), kLibpq.end(), k) != kLibpq.end())
        return u.libpq.emplace_back(std::string(k), v), "";
    return fmt::format(
        "unknown PostgreSQL URL option '{}': known options are schema, connect_timeout, "
        "command_timeout, user, password, sslmode, sslrootcert, sslcert, sslkey, "
        "target_session_attrs, application_name",
        k);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> PgUrl::keywords() const {
    std::string hosts, ports;
    for (const auto& s : servers) {
        auto host = s.host;
        if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
        hosts += (hosts.empty() ? "" : ",") + host;
        ports += (ports.empty() ? "" : ",") + std::to_string(s.port);
    }
    std::vector<std::pair<std::string, std::string>> k = {
        {"host", hosts}, {"port", ports}, {"application_name", "deadbolt"}};
    if (!database.empty()) k.emplace_back("dbname", database);
    if (!options.username.empty()) k.emplace_back("user", options.username);
    if (!options.password.empty()) k.emplace_back("password", options.password);
    for (const auto& kv : libpq) {
        auto same = std::find_if(k.begin(), k.end(), [&](auto& e) { return e.first == kv.first; });
        if (same != k.end())
            same->second = kv.second;
        else
            k.push_back(kv);
    }
    return k;
}

std::string PgUrl::describe() const {
    std::string out;
    for (const auto& s : servers) out += (out.empty() ? "" : ",") + s.describe();
    return out + "/" + database;
}

PgUrl parse_pg_url(std::string_view url, const ClientOptions& base) {
    PgUrl u;
    u.options = base;
    std::string_view rest;
    if (url.starts_with("postgresql://"))
        rest = url.substr(13);
    else if (url.starts_with("postgres://"))
        rest = url.substr(11);
    else
        return fail(fmt::format("'{}': {}", url, kForm));
    std::string_view query;
    if (auto q = rest.find('?'); q != std::string_view::npos) {
        query = rest.substr(q + 1);
        rest = rest.substr(0, q);
    }
    if (auto slash = rest.find('/'); slash != std::string_view::npos) {
        if (!percent_decode(rest.substr(slash + 1), u.database))
            return fail(fmt::format("bad %-escape in the database of '{}'", url));
        if (u.database.find('/') != std::string::npos)
            return fail(fmt::format("'{}': a database name cannot hold '/'", url));
        rest = rest.substr(0, slash);
    }
    // libpq's URLs may name a user without a password (trust, peer or .pgpass auth, or the
    // password given apart, which a lone user keeps).
    std::string authority(rest);
    if (auto at = authority.rfind('@'); at != std::string::npos && u.options.password.empty() &&
                                        authority.substr(0, at).find(':') == std::string::npos)
        authority.insert(at, ":");
    if (auto why = parse_authority(authority, url, kPgPort, u.servers, u.options.username,
                                   u.options.password);
        !why.empty())
        return fail(std::move(why));
    if (auto err = each_query_option(
            query, [&](std::string_view k, const std::string& v) { return apply_option(k, v, u); });
        !err.empty())
        return fail(std::move(err));
    if (u.options.tls.enabled || !u.options.tls.ca_file.empty())
        return fail(
            "TLS to PostgreSQL is asked in the URL: ?sslmode=verify-full&sslrootcert=ca.pem");
    u.ok = true;
    return u;
}

}  // namespace deadbolt::detail
