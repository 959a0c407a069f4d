#include "core/url_text.hpp"

#include <fmt/format.h>

#include <charconv>

#include "deadbolt/duration.hpp"

namespace deadbolt::detail {
namespace {

int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

}  // namespace

bool percent_decode(std::string_view in, std::string& out) {
    out.clear();
    for (std::size_t i = 0; i < in.size(); ++i) {
        if (in[i] != '%') {
            out += in[i];
            continue;
        }
        if (i + 2 >= in.size()) return false;
        int hi = hexval(in[i + 1]), lo = hexval(in[i + 2]);
        if (hi < 0 || lo < 0) return false;
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
    }
    return true;
}

namespace {

// One member of a host list: host[:port] or [v6][:port] (port kept when absent).
std::string parse_host_port(std::string_view text, std::string& host_out, std::uint16_t& port_out) {
    std::string_view host = text, port;
    if (!text.empty() && text.front() == '[') {
        auto close = text.find(']');
        if (close == std::string_view::npos) return "an unclosed '[' in an IPv6 host";
        host = text.substr(1, close - 1);
        auto after = text.substr(close + 1);
        if (!after.empty() && after.front() != ':') return "expected ':port' after ']'";
        if (!after.empty()) port = after.substr(1);
        if (!after.empty() && port.empty()) return "an empty port";
    } else if (auto colon = text.rfind(':'); colon != std::string_view::npos) {
        host = text.substr(0, colon);
        port = text.substr(colon + 1);
        if (port.empty()) return "an empty port";
    }
    if (host.empty()) return "an empty host: list host:port pairs separated by commas";
    host_out = std::string(host);
    if (!port.empty()) {
        unsigned p = 0;
        auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
        if (ec != std::errc() || end != port.data() + port.size() || p == 0 || p > 65535)
            return fmt::format("port '{}' is not a number in 1..65535", port);
        port_out = static_cast<std::uint16_t>(p);
    }
    return {};
}

// "user:password", each %-decoded; a lone "user" when the password came apart from the URL
// (DEADBOLT_PASSWORD, --password-file), so that it stays out of `ps`.
std::string parse_userinfo(std::string_view userinfo, std::string_view url, std::string& user,
                           std::string& password) {
    auto colon = userinfo.find(':');
    if (colon == std::string_view::npos) {
        if (!password.empty() && percent_decode(userinfo, user)) return {};
        return fmt::format(
            "'{}' needs a user and a password (user:password@, or user@ with the password in "
            "DEADBOLT_PASSWORD or --password-file)",
            url);
    }
    if (!percent_decode(userinfo.substr(0, colon), user) ||
        !percent_decode(userinfo.substr(colon + 1), password))
        return fmt::format("bad %-escape in the user or password of '{}'", url);
    return {};
}

}  // namespace

std::string HostPort::describe() const {
    if (host.find(':') != std::string::npos) return fmt::format("[{}]:{}", host, port);
    return fmt::format("{}:{}", host, port);
}

std::string parse_authority(std::string_view authority, std::string_view url,
                            std::uint16_t default_port, std::vector<HostPort>& servers,
                            std::string& user, std::string& password) {
    // The last '@' separates: a password holds '@' only %-encoded.
    if (auto at = authority.rfind('@'); at != std::string_view::npos) {
        if (auto why = parse_userinfo(authority.substr(0, at), url, user, password); !why.empty())
            return why;
        authority = authority.substr(at + 1);
    }
    for (std::size_t start = 0;;) {
        auto comma = authority.find(',', start);
        HostPort s{.host = {}, .port = default_port};
        if (auto why = parse_host_port(authority.substr(start, comma - start), s.host, s.port);
            !why.empty())
            return fmt::format("'{}': {}", url, why);
        servers.push_back(std::move(s));
        if (comma == std::string_view::npos) return {};
        start = comma + 1;
    }
}

std::string positive_duration_option(std::string_view key, const std::string& v,
                                     std::chrono::milliseconds& out) {
    std::string why;
    auto d = parse_duration(v, &why);
    if (!d) return fmt::format("option {}: {}", key, why);
    if (d->count() == 0) return fmt::format("option {} must be greater than 0", key);
    out = *d;
    return {};
}

std::string each_query_option(
    std::string_view query,
    const std::function<std::string(std::string_view key, const std::string& value)>& apply) {
    while (!query.empty()) {
        auto amp = query.find('&');
        std::string_view pair = query.substr(0, amp);
        query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
        if (pair.empty()) continue;
        auto eq = pair.find('=');
        if (eq == std::string_view::npos)
            return fmt::format("URL option '{}' has no value: write {}=VALUE", pair, pair);
        std::string value;
        if (!percent_decode(pair.substr(eq + 1), value))
            return fmt::format("bad %-escape in URL option '{}'", pair);
        if (auto err = apply(pair.substr(0, eq), value); !err.empty()) return err;
    }
    return {};
}

bool common_option(std::string_view key, const std::string& v, ClientOptions& o, std::string& err) {
    if (key == "connect_timeout")
        return err = positive_duration_option(key, v, o.connect_timeout), true;
    if (key == "command_timeout")
        return err = positive_duration_option(key, v, o.command_timeout), true;
    if (key == "user") return o.username = v, err.clear(), true;
    if (key == "password") return o.password = v, err.clear(), true;
    return false;
}

std::string userless_query_options(std::string_view query, ClientOptions& o,
                                   std::string_view scheme, std::string_view no_users) {
    return each_query_option(query, [&](std::string_view k, const std::string& v) -> std::string {
        if (std::string e; common_option(k, v, o, e))
            return k == "user" || k == "password" ? std::string(no_users) : e;
        if (k == "prefix") return o.key_prefix = v, "";
        return fmt::format(
            "unknown {} URL option '{}': known options are prefix, connect_timeout, "
            "command_timeout",
            scheme, k);
    });
}

}  // namespace deadbolt::detail
