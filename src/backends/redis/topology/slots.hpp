// Slots: what a Redis Cluster says about where keys live (CLUSTER SLOTS, MOVED, ASK), read
// into plain values. Pure; unit-tested without a server.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "backends/redis/net/resp.hpp"

namespace deadbolt::detail {

constexpr std::uint16_t kSlots = 16384;

/// host:port of one cluster node.
struct NodeAddress {
    std::string host;
    std::uint16_t port = 0;
    bool operator==(const NodeAddress&) const = default;
    // NOLINTNEXTLINE(modernize-use-nullptr): a false alarm on a defaulted <=>
    auto operator<=>(const NodeAddress&) const = default;
};

/// A range of slots and the master that serves it, with its replicas.
struct SlotRange {
    std::uint16_t first = 0;
    std::uint16_t last = 0;
    NodeAddress master;
    std::vector<NodeAddress> replicas;
};

/// Reads a CLUSTER SLOTS reply into ranges. A node listed with an empty or "?" host (the
/// server does not know its own address) is at asked_host, the node that answered.
/// False with *error saying what was malformed.
bool parse_cluster_slots(const Reply& reply, std::string_view asked_host,
                         std::vector<SlotRange>& out, std::string* error);

/// A redirection error reply: MOVED (the slot lives elsewhere now) or ASK (this one key is
/// being imported there: ask once, with ASKING).
struct Redirect {
    enum class Kind { none, moved, ask };
    Kind kind = Kind::none;
    std::uint16_t slot = 0;
    NodeAddress to;
};

/// "MOVED 3999 127.0.0.1:6381" or "ASK 3999 [::1]:6381"; kind none for anything else. An
/// empty host (":6381": the server does not know its address) means the answering node's host.
Redirect parse_redirect(std::string_view error_reply);

/// Whether an error reply is a passing cluster state that ran nothing, so the same command
/// may be sent again shortly: TRYAGAIN (a multi-key command mid-migration) or CLUSTERDOWN
/// (a failover is under way).
bool is_cluster_retry(std::string_view error_reply);

}  // namespace deadbolt::detail
