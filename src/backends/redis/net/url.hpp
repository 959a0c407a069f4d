// URL parsing: redis://, rediss://, unix://, redlock://, redis-sentinel:// and redis-cluster://
// into Endpoints.
// Pure; no I/O.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "backends/redis/net/endpoint.hpp"
#include "core/url_text.hpp"
#include "deadbolt/options.hpp"

namespace deadbolt::detail {

struct UrlResult {
    bool ok = false;
    Endpoint endpoint;
    std::string error;  // what is wrong and what to write instead, when !ok
};

/// The RedisOptions in o.engine, or the defaults when it holds none.
RedisOptions redis_options_of(const ClientOptions& o);

/// Parses url on top of base options (URL parts and query options override base).
/// Query options: connect_timeout, command_timeout, prefix, db, user, password, ca, cert,
/// key, sni, verify (0/1), keepalive (0/1), sync_replicas, sync_timeout, command_connections
/// (these three and db set base.engine's RedisOptions). Unknown options are errors.
UrlResult parse_url(std::string_view url, const ClientOptions& base);

struct NodesResult {
    bool ok = false;
    std::vector<Endpoint> nodes;  // in the order given
    bool allow_fewer = false;     // the allow_fewer=1 query option
    bool fencing = true;          // fencing=0: skip the fence round (Lease::fence() is 0)
    std::string error;
};

/// redlock://[user[:password]@]host[:port],host[:port],...[/db][?opt=v&...]: one Endpoint per
/// node, each with the shared credentials, db and options (as parse_url reads them), plus
/// allow_fewer=0|1 and fencing=0|1. Checks the form only; check_node_set judges the set once names
/// resolve.
NodesResult parse_node_list(std::string_view url, const ClientOptions& base);

/// redis-cluster://[user[:password]@]host[:port],...[?opt=v&...]: the nodes to ask for the
/// cluster's slot map first (any few will do), each with the shared credentials and options.
/// A cluster has only database 0, so a /db other than /0 is an error. Checks the form only.
NodesResult parse_cluster_url(std::string_view url, const ClientOptions& base);

/// The port a sentinel listens on when the URL does not say.
constexpr std::uint16_t kSentinelPort = 26379;

struct SentinelResult {
    bool ok = false;
    std::vector<Endpoint> sentinels;  // in the order given; sentinel_user/_password, db 0
    std::string master_name;
    Endpoint master;  // the master's credentials, db and options; host/port come from asking
    std::string error;
};

/// redis-sentinel://[user[:password]@]host[:port],...[/master-name][/db][?opt=v&...]: the
/// sentinels to ask (port 26379 by default), the master's name, and the options of the master
/// connection (user, password and db are the master's; sentinel_user and sentinel_password
/// authenticate to the sentinels). Checks the form only.
SentinelResult parse_sentinel_url(std::string_view url, const ClientOptions& base);

}  // namespace deadbolt::detail
