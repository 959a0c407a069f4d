// How an engine that keeps a reentrant holding as text (an etcd key's value, a ZooKeeper
// node's data) writes its owner and how many holds it has: "<holds> <owner>". Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace deadbolt::detail {

/// A reentrant holding's text: holds (>= 1) and the owner's id.
std::string reentrant_value(std::int64_t holds, std::string_view owner);
/// The holds and owner in a reentrant holding's text; nullopt when it is none (etcdctl's,
/// Curator's, a Mutex's token).
std::optional<std::pair<std::int64_t, std::string_view>> parse_reentrant(std::string_view value);
/// The holds of owner in a reentrant holding's text; nullopt when it is another's or none.
std::optional<std::int64_t> holds_of(std::string_view value, std::string_view owner);

}  // namespace deadbolt::detail
