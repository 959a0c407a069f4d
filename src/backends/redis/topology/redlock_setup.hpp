// Redlock setup: the checks a node set must pass before a Redlock client uses it. Listing the
// same server twice, or a replica of another node, would count one failure domain as two votes
// and quietly void the majority argument; the caller hears about it at connect, not later.
#pragma once

#include <string>
#include <vector>

#include "backends/redis/net/endpoint.hpp"
#include "backends/redis/topology/nodes.hpp"

namespace deadbolt::detail {

/// Resolves every node's name, refuses a set that check_node_set refuses, then asks every
/// node for INFO replication: a node that is a replica is refused, and fewer than a majority
/// answering is no_quorum. warnings gets what is legal but weak (an even count, a node that
/// could not be checked because it is down now).
Status check_redlock_nodes(Nodes& nodes, const std::vector<Endpoint>& eps, bool allow_fewer,
                           std::vector<std::string>& warnings);

}  // namespace deadbolt::detail
