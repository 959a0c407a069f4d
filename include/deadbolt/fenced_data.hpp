// Fenced data: values that accept a write only from the newest fence (Client::fenced_set,
// Client::fenced_cas, Client::fenced_get).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace deadbolt {

/// Outcome of a fenced write.
struct FencedResult {
    bool accepted = false;      ///< The write happened.
    std::uint64_t highest = 0;  ///< Highest fence the resource has seen after this call.
    std::uint64_t version = 0;  ///< Writes the key has taken after this call (see fenced_get).
    /// Refused because a higher fence wrote: this holder is stale and must stop. (Refused
    /// otherwise: the version moved on; re-read and try again.)
    bool stale_fence = false;
};

/// A value read with the version a fenced compare-and-set must name.
struct FencedValue {
    std::optional<std::string> value{};  ///< nullopt when the key does not exist.
    std::uint64_t version = 0;           ///< Fenced writes the key has taken; 0 = none yet.
};

}  // namespace deadbolt
