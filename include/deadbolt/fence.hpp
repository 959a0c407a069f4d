// Fencing tokens as text: what the CLI and environment variables carry.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace deadbolt {

/// Every fence deadbolt issues lies in 1..kMaxFence (below 2^53, so JSON and JavaScript read
/// it exactly); 0 means "no fence" (a shared holding, or Redlock with fencing=0).
inline constexpr std::uint64_t kMaxFence = (std::uint64_t{1} << 53) - 1;

/// Reads a fence written as a plain decimal integer in 1..kMaxFence (what Lease::fence() and
/// $DEADBOLT_FENCE hold). Returns nullopt for anything else (empty, signs, hex, spaces, 0, out
/// of range) and puts the reason in *why when given.
std::optional<std::uint64_t> parse_fence(std::string_view text, std::string* why = nullptr);

}  // namespace deadbolt
