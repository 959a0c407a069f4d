#include "backends/redis/topology/redlock_setup.hpp"

#include <fmt/format.h>

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>

#include "core/quorum.hpp"

namespace deadbolt::detail {
namespace {

// "ip:port" (or unix:path) of a node, so two names of one server compare equal.
Status resolve(const Endpoint& ep, std::string& out) {
    if (ep.kind == Endpoint::Kind::unix_socket) {
        out = "unix:" + ep.path;
        return {};
    }
    asio::io_context io;
    asio::ip::tcp::resolver resolver(io);
    std::error_code ec;
    auto results = resolver.resolve(ep.host, std::to_string(ep.port), ec);
    if (ec || results.empty())
        return Status::error(errc::connect_failed,
                             fmt::format("cannot resolve Redlock node '{}': {}", ep.host,
                                         ec ? ec.message() : "no address"));
    auto e = results.begin()->endpoint();
    out = fmt::format("{}:{}", e.address().to_string(), e.port());
    return {};
}

}  // namespace

Status check_redlock_nodes(Nodes& nodes, const std::vector<Endpoint>& eps, bool allow_fewer,
                           std::vector<std::string>& warnings) {
    std::vector<std::string> addresses(eps.size());
    for (std::size_t i = 0; i < eps.size(); ++i)
        if (Status st = resolve(eps[i], addresses[i]); !st.ok()) return st;
    auto set = check_node_set(addresses, allow_fewer);
    if (!set.status.ok()) return set.status;
    if (!set.warning.empty()) warnings.push_back(set.warning);

    auto results = nodes.command_everywhere({"INFO", "replication"});
    for (std::size_t i = 0; i < results.size(); ++i) {
        const auto& r = results[i];
        if (!r.status.ok()) {
            if (r.status.ec == make_error_code(errc::auth_failed) ||
                r.status.ec == make_error_code(errc::permission_denied) ||
                r.status.ec == make_error_code(errc::tls_failed))
                return r.status;
            warnings.push_back(
                fmt::format("Redlock node {} is unreachable ({}); it was not "
                            "checked and has no vote until it answers",
                            addresses[i], r.status.detail));
            continue;
        }
        NodeRole role = parse_role(r.replies.front().str);
        if (!role.master)
            return Status::error(
                errc::invalid_argument,
                fmt::format("Redlock node {} is a replica of {}:{}: Redlock needs independent "
                            "masters (a replica and its master fail together, and a replica "
                            "refuses writes); list masters only",
                            addresses[i], role.master_host, role.master_port));
    }
    return nodes.need_majority(results, ": no lock could be taken; start the nodes or fix the URL");
}

}  // namespace deadbolt::detail
