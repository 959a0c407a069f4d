#include "backends/etcd/url.hpp"

#include <fmt/format.h>

#include "core/url_text.hpp"

namespace deadbolt::detail {
namespace {

constexpr std::string_view kForm =
    "expected etcd://[user:password@]host[:port][,host[:port]...][?opt=v&...] (or etcds:// "
    "for TLS)";

EtcdUrl fail(std::string why) {
    EtcdUrl u;
    u.error = std::move(why);
    return u;
}

std::string apply_option(std::string_view k, const std::string& v, ClientOptions& o) {
    if (std::string err; common_option(k, v, o, err)) return err;
    if (k == "prefix") return o.key_prefix = v, "";
    if (k == "ca") return o.tls.ca_file = v, "";
    if (k == "cert") return o.tls.cert_file = v, "";
    if (k == "key") return o.tls.key_file = v, "";
    return fmt::format(
        "unknown etcd URL option '{}': known options are connect_timeout, command_timeout, "
        "prefix, user, password, ca, cert, key",
        k);
}

}  // namespace

EtcdUrl parse_etcd_url(std::string_view url, const ClientOptions& base) {
    EtcdUrl u;
    u.options = base;
    std::string_view rest;
    if (url.starts_with("etcd://")) {
        rest = url.substr(7);
    } else if (url.starts_with("etcds://")) {
        rest = url.substr(8);
        u.options.tls.enabled = true;
    } else {
        return fail(fmt::format("'{}': {}", url, kForm));
    }
    std::string_view query;
    if (auto q = rest.find('?'); q != std::string_view::npos) {
        query = rest.substr(q + 1);
        rest = rest.substr(0, q);
    }
    if (auto slash = rest.find('/'); slash != std::string_view::npos) {
        if (rest.substr(slash) != "/")
            return fail(
                fmt::format("'{}': an etcd URL has no path (lock names are keys; a "
                            "common prefix is ?prefix=...)",
                            url));
        rest = rest.substr(0, slash);
    }
    if (auto why = parse_authority(rest, url, kEtcdPort, u.members, u.options.username,
                                   u.options.password);
        !why.empty())
        return fail(std::move(why));
    if (auto err = each_query_option(query,
                                     [&](std::string_view k, const std::string& v) {
                                         return apply_option(k, v, u.options);
                                     });
        !err.empty())
        return fail(std::move(err));
    const auto& tls = u.options.tls;
    if (!tls.enabled && (!tls.ca_file.empty() || !tls.cert_file.empty()))
        return fail(fmt::format("'{}' sets TLS options but is not etcds://", url));
    if (tls.cert_file.empty() != tls.key_file.empty())
        return fail("a TLS client certificate needs both cert= and key=");
    if (u.options.username.empty() != u.options.password.empty())
        return fail(fmt::format("'{}': etcd needs both a user and a password, or neither", url));
    u.ok = true;
    return u;
}

}  // namespace deadbolt::detail
