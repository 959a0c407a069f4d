// Connecting to Redis in each of its topologies: parse the URL, make the client's store,
// and check at once what can be checked (auth, ACL grants, the node set, the primary's role).
#include "backends/redis/connect.hpp"

#include <fmt/format.h>

#include "backends/redis/acl.hpp"
#include "backends/redis/commands.hpp"
#include "backends/redis/net/url.hpp"
#include "backends/redis/replies.hpp"
#include "backends/redis/store.hpp"
#include "backends/redis/topology/redlock_setup.hpp"
#include "client_access.hpp"
#include "core/quorum.hpp"
#include "deadbolt/error.hpp"

namespace deadbolt::detail {
namespace {

// A named ACL user learns at connect what it lacks (redis/acl.hpp); true when it was checked.
bool check_acl_user(ClientImpl& impl) {
    const auto& o = impl.options;
    if (o.username.empty()) return false;
    check_acl(*redis(impl).server, o.username, o.key_prefix,
              Clock::now() + o.connect_timeout + o.command_timeout)
        .throw_if_error();
    return true;
}

Client connect_redlock(std::string_view url, const ClientOptions& options) {
    auto parsed = parse_node_list(url, options);
    if (!parsed.ok) throw UsageError(make_error_code(errc::invalid_url), parsed.error);
    if (parsed.nodes.front().redis.sync_replicas > 0)
        throw UsageError(make_error_code(errc::invalid_url),
                         "sync_replicas applies to one primary (redis://, redis-sentinel://); "
                         "Redlock's nodes are independent masters: drop sync_replicas");
    auto impl = redis_client(parsed.nodes.front().options, parsed.nodes, parsed.fencing);
    check_redlock_nodes(*redis(*impl).nodes, parsed.nodes, parsed.allow_fewer, impl->warnings)
        .throw_if_error();
    return ClientAccess::make(std::move(impl));
}

Client connect_sentinel(std::string_view url, const ClientOptions& options) {
    auto parsed = parse_sentinel_url(url, options);
    if (!parsed.ok) throw UsageError(make_error_code(errc::invalid_url), parsed.error);
    auto sentinel = std::make_shared<Sentinel>(parsed.sentinels, parsed.master_name);
    std::string host;
    std::uint16_t port = 0;
    sentinel->discover(host, port).throw_if_error();
    Endpoint ep = parsed.master;
    ep.host = host;
    ep.port = port;
    auto impl = redis_client(ep.options, ep);
    Client c = ClientAccess::make(impl);
    Reply info;
    command(*redis(*impl).conn, {"INFO", "replication"}, info,
            Clock::now() + ep.options.connect_timeout + ep.options.command_timeout)
        .throw_if_error();
    if (!parse_role(info.str).master)
        Status::error(errc::readonly,
                      fmt::format("the sentinels name {} as the primary of '{}', but it "
                                  "is a replica: a failover is under way; try again",
                                  ep.describe(), parsed.master_name))
            .throw_if_error();
    check_acl_user(*impl);
    std::weak_ptr<ClientImpl> weak = impl;
    sentinel->follow(host, port, [weak](const std::string& h, std::uint16_t p) {
        if (auto client = weak.lock()) redis(*client).primary_moved(h, p);
    });
    redis(*impl).sentinel = std::move(sentinel);
    return c;
}

// How often a cluster client re-reads the slot map unasked, so a failover that moved a master
// is noticed (and its leases checked) even when no call meets it.
constexpr std::chrono::seconds kClusterRecheck{1};

Client connect_cluster(std::string_view url, const ClientOptions& options) {
    auto parsed = parse_cluster_url(url, options);
    if (!parsed.ok) throw UsageError(make_error_code(errc::invalid_url), parsed.error);
    auto cluster = std::make_shared<Cluster>(parsed.nodes);
    const auto& o = parsed.nodes.front().options;
    cluster->refresh(Clock::now() + o.connect_timeout + o.command_timeout).throw_if_error();
    auto impl = redis_client(parsed.nodes.front().options, parsed.nodes, cluster);
    check_acl_user(*impl);
    // A master's replica took over: its leases are checked there, and those it does not hold
    // (writes replication had not carried yet) are reported lost.
    std::weak_ptr<ClientImpl> weak = impl;
    cluster->watch(kClusterRecheck, [weak] {
        if (auto c = weak.lock(); c && c->store->on_doubt) c->store->on_doubt();
    });
    return ClientAccess::make(std::move(impl));
}

}  // namespace

Client connect_redis(std::string_view url, const ClientOptions& options) {
    if (url.starts_with("redlock://")) return connect_redlock(url, options);
    if (url.starts_with("redis-sentinel://")) return connect_sentinel(url, options);
    if (url.starts_with("redis-cluster://")) return connect_cluster(url, options);
    auto parsed = parse_url(url, options);
    if (!parsed.ok) throw UsageError(make_error_code(errc::invalid_url), parsed.error);
    auto impl = redis_client(parsed.endpoint.options, parsed.endpoint);
    Client c = ClientAccess::make(impl);
    if (!check_acl_user(*impl)) c.ping();
    return c;
}

}  // namespace deadbolt::detail
