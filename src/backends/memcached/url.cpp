#include "backends/memcached/url.hpp"

#include <fmt/format.h>

#include <set>

namespace deadbolt::detail {
namespace {

constexpr std::string_view kForm = "expected memcached://host[:port][,host[:port]...][?opt=v&...]";

McUrl fail(std::string why) {
    McUrl u;
    u.error = std::move(why);
    return u;
}

std::string apply_option(std::string_view k, const std::string& v, McUrl& u) {
    if (k == "user" || k == "password")
        return "memcached's text protocol has no users or passwords: drop them from the URL "
               "(keep memcached on a private network or behind a TLS proxy)";
    if (std::string err; common_option(k, v, u.options, err)) return err;
    if (k == "prefix") return u.options.key_prefix = v, "";
    if (k == "allow_evictions") {
        if (v != "true" && v != "false" && v != "1" && v != "0")
            return fmt::format("allow_evictions={}: expected true or false", v);
        u.allow_evictions = v == "true" || v == "1";
        return "";
    }
    return fmt::format(
        "unknown memcached URL option '{}': known options are connect_timeout, command_timeout, "
        "prefix, allow_evictions",
        k);
}

}  // namespace

McUrl parse_mc_url(std::string_view url, const ClientOptions& base) {
    McUrl u;
    u.options = base;
    if (!url.starts_with("memcached://")) return fail(fmt::format("'{}': {}", url, kForm));
    std::string_view rest = url.substr(12);
    std::string_view query;
    if (auto q = rest.find('?'); q != std::string_view::npos) {
        query = rest.substr(q + 1);
        rest = rest.substr(0, q);
    }
    if (auto slash = rest.find('/'); slash != std::string_view::npos) {
        if (rest.substr(slash) != "/")
            return fail(
                fmt::format("'{}': a memcached URL has no path (a common prefix of "
                            "lock names is ?prefix=...)",
                            url));
        rest = rest.substr(0, slash);
    }
    std::string user, password;
    if (auto why = parse_authority(rest, url, kMemcachedPort, u.servers, user, password);
        !why.empty())
        return fail(std::move(why));
    if (!user.empty() || !password.empty())
        return fail(
            fmt::format("'{}': memcached's text protocol has no users or passwords: "
                        "drop 'user@' from the URL",
                        url));
    std::set<std::string> seen;
    for (const auto& s : u.servers)
        if (!seen.insert(s.describe()).second)
            return fail(
                fmt::format("'{}': server {} is listed twice: its vote would count "
                            "twice; list each server once",
                            url, s.describe()));
    if (auto err = each_query_option(
            query, [&](std::string_view k, const std::string& v) { return apply_option(k, v, u); });
        !err.empty())
        return fail(std::move(err));
    u.ok = true;
    return u;
}

}  // namespace deadbolt::detail
