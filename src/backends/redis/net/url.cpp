#include "backends/redis/net/url.hpp"

#include <fmt/format.h>

#include <charconv>
#include <map>
#include <sstream>

namespace deadbolt::detail {
namespace {

constexpr std::string_view kForms =
    "expected redis://[user[:password]@]host[:port][/db][?opt=v&...], rediss://... or "
    "unix:///path/to/redis.sock[?db=N]";

template <class Int>
bool parse_int(std::string_view s, Int& out) {
    if (s.empty()) return false;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && p == s.data() + s.size();
}

bool parse_bool(std::string_view v, bool& out) {
    if (v == "1" || v == "true" || v == "yes") return out = true, true;
    if (v == "0" || v == "false" || v == "no") return out = false, true;
    return false;
}

// Applies one query option; returns an error message or "".
std::string apply_option(std::string_view k, const std::string& v, Endpoint& ep) {
    auto& o = ep.options;
    auto& r = ep.redis;
    auto dur = [&](std::chrono::milliseconds& dst) { return positive_duration_option(k, v, dst); };
    auto boolean = [&](bool& dst) -> std::string {
        return parse_bool(v, dst) ? "" : fmt::format("option {} must be 0 or 1, not '{}'", k, v);
    };
    if (k == "connect_timeout") return dur(o.connect_timeout);
    if (k == "command_timeout") return dur(o.command_timeout);
    if (k == "prefix") return o.key_prefix = v, "";
    if (k == "user") return o.username = v, "";
    if (k == "password") return o.password = v, "";
    if (k == "db") {
        if (!parse_int(v, r.db) || r.db < 0)
            return fmt::format("option db must be a non-negative integer, not '{}'", v);
        return "";
    }
    if (k == "ca") return o.tls.ca_file = v, "";
    if (k == "cert") return o.tls.cert_file = v, "";
    if (k == "key") return o.tls.key_file = v, "";
    if (k == "sni") return o.tls.sni = v, "";
    if (k == "verify") return boolean(o.tls.verify);
    if (k == "keepalive") return boolean(o.keepalive);
    if (k == "sync_replicas") {
        if (!parse_int(v, r.sync_replicas) || r.sync_replicas < 0)
            return fmt::format("option sync_replicas must be a non-negative integer, not '{}'", v);
        return "";
    }
    if (k == "sync_timeout") return dur(r.sync_timeout);
    if (k == "command_connections") {
        if (!parse_int(v, r.command_connections) || r.command_connections < 1)
            return fmt::format(
                "option command_connections must be at least 1 (1 = every "
                "caller shares one connection), not '{}'",
                v);
        return "";
    }
    return fmt::format(
        "unknown URL option '{}': known options are connect_timeout, command_timeout, prefix, "
        "db, user, password, ca, cert, key, sni, verify, keepalive, sync_replicas, sync_timeout, "
        "command_connections",
        k);
}

UrlResult fail(std::string msg) {
    UrlResult r;
    r.error = std::move(msg);
    return r;
}

}  // namespace

RedisOptions redis_options_of(const ClientOptions& o) {
    // Client::connect lets only Redis's options through to a Redis URL.
    if (const auto* r = dynamic_cast<const RedisOptions*>(o.engine.get())) return *r;
    return {};
}

UrlResult parse_url(std::string_view url, const ClientOptions& base) {
    UrlResult r;
    r.endpoint.options = base;
    r.endpoint.redis = redis_options_of(base);
    Endpoint& ep = r.endpoint;
    if (url.empty()) return fail(fmt::format("empty URL: {}", kForms));

    auto scheme_end = url.find("://");
    if (scheme_end == std::string_view::npos)
        return fail(fmt::format("URL '{}' has no scheme: {}", url, kForms));
    std::string_view scheme = url.substr(0, scheme_end);
    std::string_view rest = url.substr(scheme_end + 3);

    std::string_view query;
    if (auto q = rest.find('?'); q != std::string_view::npos) {
        query = rest.substr(q + 1);
        rest = rest.substr(0, q);
    }

    if (scheme == "unix") {
        if (rest.empty() || rest.front() != '/')
            return fail(fmt::format(
                "unix URL '{}' needs an absolute path: unix:///path/to/redis.sock", url));
        ep.kind = Endpoint::Kind::unix_socket;
        if (!percent_decode(rest, ep.path))
            return fail(fmt::format("bad %-escape in socket path of '{}'", url));
    } else if (scheme == "redis" || scheme == "rediss") {
        ep.kind = Endpoint::Kind::tcp;
        ep.options.tls.enabled = scheme == "rediss";
        std::string_view path;
        if (auto slash = rest.find('/'); slash != std::string_view::npos) {
            path = rest.substr(slash + 1);
            rest = rest.substr(0, slash);
        }
        // Passwords may contain '@' when percent-encoded only; the last '@' separates.
        if (auto at = rest.rfind('@'); at != std::string_view::npos) {
            std::string_view userinfo = rest.substr(0, at);
            rest = rest.substr(at + 1);
            std::string_view user = userinfo, pass;
            bool has_pass = false;
            if (auto colon = userinfo.find(':'); colon != std::string_view::npos) {
                user = userinfo.substr(0, colon);
                pass = userinfo.substr(colon + 1);
                has_pass = true;
            }
            std::string u, p;
            if (!percent_decode(user, u) || !percent_decode(pass, p))
                return fail(fmt::format("bad %-escape in the user or password of URL '{}'", url));
            if (has_pass) {
                ep.options.username = u;
                ep.options.password = p;
            } else if (!base.password.empty()) {
                // The password came apart from the URL (DEADBOLT_PASSWORD, a file): a lone
                // userinfo is then the user, as the grammar reads.
                ep.options.username = u;
            } else {
                // redis://secret@host: a lone userinfo is the password (redis-cli convention).
                ep.options.password = u;
            }
        }
        std::string_view host = rest, port;
        if (!rest.empty() && rest.front() == '[') {
            auto close = rest.find(']');
            if (close == std::string_view::npos)
                return fail(fmt::format("URL '{}' has an unclosed '[' in its IPv6 host", url));
            host = rest.substr(1, close - 1);
            std::string_view after = rest.substr(close + 1);
            if (!after.empty()) {
                if (after.front() != ':')
                    return fail(fmt::format("URL '{}': expected ':port' after ']'", url));
                port = after.substr(1);
                if (port.empty()) return fail(fmt::format("URL '{}' has an empty port", url));
            }
        } else if (auto colon = rest.rfind(':'); colon != std::string_view::npos) {
            host = rest.substr(0, colon);
            port = rest.substr(colon + 1);
            if (port.empty()) return fail(fmt::format("URL '{}' has an empty port", url));
        }
        if (host.empty()) return fail(fmt::format("URL '{}' has no host: {}", url, kForms));
        ep.host = std::string(host);
        if (!port.empty()) {
            unsigned p = 0;
            if (!parse_int(port, p) || p == 0 || p > 65535)
                return fail(
                    fmt::format("URL '{}': port '{}' is not a number in 1..65535", url, port));
            ep.port = static_cast<std::uint16_t>(p);
        }
        if (!path.empty()) {
            if (!parse_int(path, ep.redis.db) || ep.redis.db < 0)
                return fail(fmt::format("URL '{}': database '{}' is not a non-negative integer",
                                        url, path));
        }
    } else {
        return fail(fmt::format("unknown URL scheme '{}' in '{}': {}", scheme, url, kForms));
    }

    if (auto err = each_query_option(
            query,
            [&](std::string_view k, const std::string& v) { return apply_option(k, v, ep); });
        !err.empty())
        return fail(std::move(err));
    if (!ep.options.tls.enabled &&
        (!ep.options.tls.ca_file.empty() || !ep.options.tls.cert_file.empty() ||
         !ep.options.tls.sni.empty()))
        return fail(fmt::format("URL '{}' sets TLS options but is not rediss://", url));
    if (ep.options.tls.cert_file.empty() != ep.options.tls.key_file.empty())
        return fail("TLS client certificate needs both cert= and key=");
    // Checked once the URL had its say: its option wins over RedisOptions.
    if (ep.redis.command_connections < 1)
        return fail(
            fmt::format("RedisOptions::command_connections must be at least 1 (1 = every "
                        "blocking caller shares one connection), not {}",
                        ep.redis.command_connections));
    r.ok = true;
    return r;
}

std::string Endpoint::describe() const {
    if (kind == Kind::unix_socket) return "unix:" + path;
    if (host.find(':') != std::string::npos) return fmt::format("[{}]:{}", host, port);
    return fmt::format("{}:{}", host, port);
}

namespace {

// A URL naming several servers: scheme://[userinfo@]host[:port],host[:port],...[/path][?query].
struct HostList {
    std::string userinfo;  // "user:pass@" or empty
    std::vector<std::string> hosts;
    std::string tail;  // "/path?query", without the options taken out into `own`
};

// Splits url. The query options named in own are not connection options: their values are
// taken out into own's strings (and left unset when absent).
std::string split_hosts(std::string_view url, std::string_view scheme, std::string_view form,
                        const std::map<std::string_view, std::string*>& own, HostList& out) {
    if (url.substr(0, scheme.size()) != scheme)
        return fmt::format("expected {}, not '{}'", form, url);
    std::string_view rest = url.substr(scheme.size());
    if (auto at = rest.rfind('@', rest.find_first_of("/?")); at != std::string_view::npos) {
        out.userinfo = std::string(rest.substr(0, at + 1));
        rest = rest.substr(at + 1);
    }
    auto end = rest.find_first_of("/?");
    std::string_view hosts = rest.substr(0, end);
    out.tail = std::string(end == std::string_view::npos ? "" : rest.substr(end));
    if (auto q = out.tail.find('?'); q != std::string::npos) {
        std::string query = out.tail.substr(q + 1), kept;
        std::stringstream in(query);
        for (std::string kv; std::getline(in, kv, '&');) {
            auto eq = kv.find('=');
            auto it = own.find(std::string_view(kv).substr(0, eq));
            if (it != own.end() && eq != std::string::npos) {
                *it->second = kv.substr(eq + 1);
                continue;
            }
            kept += (kept.empty() ? "" : "&") + kv;
        }
        out.tail = out.tail.substr(0, q) + (kept.empty() ? "" : "?" + kept);
    }
    for (std::size_t start = 0;;) {
        auto comma = hosts.find(',', start);
        std::string_view host = hosts.substr(start, comma - start);
        if (host.empty())
            return fmt::format(
                "{} has an empty server in '{}': list host:port pairs separated "
                "by commas",
                scheme.substr(0, scheme.size() - 3), hosts);
        out.hosts.emplace_back(host);
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    return {};
}

// A 0/1 option taken out by split_hosts; unset keeps out as it is.
std::string own_bool(std::string_view name, const std::string& value, bool& out) {
    if (value.empty() || parse_bool(value, out)) return {};
    return fmt::format("option {} must be 0 or 1, not '{}'", name, value);
}

// One Endpoint per listed host, each with the list's credentials, path and options.
std::string endpoints_of(const HostList& list, std::string_view what, const ClientOptions& base,
                         std::vector<Endpoint>& out) {
    for (const auto& host : list.hosts) {
        auto one = parse_url("redis://" + list.userinfo + host + list.tail, base);
        if (!one.ok) return fmt::format("{} '{}': {}", what, host, one.error);
        out.push_back(std::move(one.endpoint));
    }
    return {};
}

}  // namespace

NodesResult parse_node_list(std::string_view url, const ClientOptions& base) {
    NodesResult out;
    HostList list;
    std::string allow_fewer, fencing;
    out.error = split_hosts(url, "redlock://", "redlock://host:port,host:port,...[/db][?opt=v&...]",
                            {{"allow_fewer", &allow_fewer}, {"fencing", &fencing}}, list);
    if (out.error.empty()) out.error = own_bool("allow_fewer", allow_fewer, out.allow_fewer);
    if (out.error.empty()) out.error = own_bool("fencing", fencing, out.fencing);
    if (out.error.empty()) out.error = endpoints_of(list, "redlock node", base, out.nodes);
    out.ok = out.error.empty();
    return out;
}

NodesResult parse_cluster_url(std::string_view url, const ClientOptions& base) {
    NodesResult out;
    HostList list;
    out.error = split_hosts(url, "redis-cluster://",
                            "redis-cluster://host:port,host:port,...[?opt=v&...]", {}, list);
    auto path_end = list.tail.find('?');
    std::string path = list.tail.substr(0, path_end);
    if (out.error.empty() && !path.empty() && path != "/" && path != "/0")
        out.error =
            fmt::format("a Redis Cluster has only database 0: drop '{}' from '{}'", path, url);
    if (out.error.empty()) out.error = endpoints_of(list, "cluster node", base, out.nodes);
    out.ok = out.error.empty();
    return out;
}

SentinelResult parse_sentinel_url(std::string_view url, const ClientOptions& base) {
    SentinelResult out;
    HostList list;
    std::string user, password;
    out.error = split_hosts(url, "redis-sentinel://",
                            "redis-sentinel://host:port,host:port,.../master-name[/db][?opt=v&...]",
                            {{"sentinel_user", &user}, {"sentinel_password", &password}}, list);
    if (!out.error.empty()) return out;
    // The path is /master-name[/db]; the db (and credentials, options) are the master's.
    auto name_end = list.tail.find_first_of("/?", 1);
    if (list.tail.empty() || list.tail[0] != '/' || name_end == 1) {
        out.error = fmt::format(
            "name the master the sentinels watch: redis-sentinel://"
            "host:port,.../master-name, not '{}'",
            url);
        return out;
    }
    if (!percent_decode(list.tail.substr(1, name_end - 1), out.master_name)) {
        out.error = fmt::format("bad %-escape in the master name of '{}'", url);
        return out;
    }
    std::string rest = name_end == std::string::npos ? "" : list.tail.substr(name_end);
    auto master = parse_url("redis://" + list.userinfo + "master.invalid" + rest, base);
    if (!master.ok) {
        out.error = master.error;
        return out;
    }
    out.master = std::move(master.endpoint);
    for (const auto& host : list.hosts) {
        // Sentinels share the master's timeouts and TLS settings, not its credentials or db.
        Endpoint s = out.master;
        s.options.username = user;
        s.options.password = password;
        s.redis.db = 0;
        s.redis.sync_replicas = 0;
        auto where = parse_url("redis://" + host, {});
        if (!where.ok) {
            out.error = fmt::format("sentinel '{}': {}", host, where.error);
            return out;
        }
        s.host = where.endpoint.host;
        bool has_port = host.front() == '[' ? host.find("]:") != std::string::npos
                                            : host.find(':') != std::string::npos;
        s.port = has_port ? where.endpoint.port : kSentinelPort;
        out.sentinels.push_back(std::move(s));
    }
    out.ok = true;
    return out;
}

}  // namespace deadbolt::detail
