#include "backends/zookeeper/url.hpp"

#include <fmt/format.h>

#include <optional>

#include "core/url_text.hpp"

namespace deadbolt::detail {
namespace {

constexpr std::string_view kForm =
    "expected zk://[user:password@]host[:port][,host[:port]...][/chroot][?opt=v&...]";

ZkUrl fail(std::string why) {
    ZkUrl u;
    u.error = std::move(why);
    return u;
}

std::string apply_option(std::string_view k, const std::string& v, ZkUrl& u,
                         std::optional<ZkAcl>& acl) {
    if (std::string err; common_option(k, v, u.options, err)) return err;
    if (k == "session_timeout") return positive_duration_option(k, v, u.session_timeout);
    if (k == "acl") {
        if (v == "open")
            acl = ZkAcl::open;
        else if (v == "creator")
            acl = ZkAcl::creator;
        else
            return fmt::format(
                "acl={}: the ZooKeeper URL option acl is 'creator' (the URL's user all rights, "
                "anyone else read; the default with a user) or 'open' (anyone may do anything; "
                "the default without one)",
                v);
        return {};
    }
    if (k == "prefix")
        return "a ZooKeeper URL names its prefix as a path (the chroot): zk://host/prefix";
    return fmt::format(
        "unknown ZooKeeper URL option '{}': known options are connect_timeout, "
        "command_timeout, session_timeout, acl, user, password",
        k);
}

}  // namespace

std::string ZkUrl::describe() const {
    std::string out;
    for (const auto& s : servers) out += (out.empty() ? "" : ",") + s.describe();
    return out;
}

std::string ZkUrl::hosts() const {
    return describe() + chroot;
}

ZkUrl parse_zk_url(std::string_view url, const ClientOptions& base) {
    ZkUrl u;
    u.options = base;
    if (!url.starts_with("zk://")) return fail(fmt::format("'{}': {}", url, kForm));
    std::string_view rest = url.substr(5);
    std::string_view query;
    if (auto q = rest.find('?'); q != std::string_view::npos) {
        query = rest.substr(q + 1);
        rest = rest.substr(0, q);
    }
    if (auto slash = rest.find('/'); slash != std::string_view::npos) {
        std::string path;
        if (!percent_decode(rest.substr(slash), path))
            return fail(fmt::format("bad %-escape in the chroot of '{}'", url));
        rest = rest.substr(0, slash);
        while (path.size() > 1 && path.back() == '/') path.pop_back();
        if (path != "/") {
            if (path.find("//") != std::string::npos)
                return fail(fmt::format("'{}': the chroot '{}' has an empty part", url, path));
            u.chroot = path;
        }
    }
    if (auto why =
            parse_authority(rest, url, kZkPort, u.servers, u.options.username, u.options.password);
        !why.empty())
        return fail(std::move(why));
    std::optional<ZkAcl> acl;
    if (auto err = each_query_option(
            query,
            [&](std::string_view k, const std::string& v) { return apply_option(k, v, u, acl); });
        !err.empty())
        return fail(std::move(err));
    if (u.options.username.empty() != u.options.password.empty())
        return fail(fmt::format("'{}': digest auth needs both a user and a password", url));
    if (u.options.username.find(':') != std::string::npos)
        return fail(fmt::format("'{}': a digest user name cannot contain ':'", url));
    // A lock node anyone may delete is anyone's to take: with an identity, only it may.
    u.acl = acl.value_or(u.options.username.empty() ? ZkAcl::open : ZkAcl::creator);
    if (u.acl == ZkAcl::creator && u.options.username.empty())
        return fail(fmt::format(
            "'{}': acl=creator gives the URL's digest user all rights on the nodes deadbolt "
            "creates: name one (zk://user:password@host/...)",
            url));
    if (u.options.tls.enabled || !u.options.tls.ca_file.empty())
        return fail("TLS to ZooKeeper is not supported by deadbolt yet");
    u.ok = true;
    return u;
}

}  // namespace deadbolt::detail
