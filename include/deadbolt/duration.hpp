// Human durations ("500ms", "30s", "5m", "1h30m") for CLIs and URL options.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace deadbolt {

/// Parses a non-negative duration made of number+unit parts (us, ms, s, m, h, d), e.g.
/// "1m30s" or "1.5s", rounded up to whole milliseconds (never silently 0). Returns nullopt for
/// anything else (no unit, negative, overflow, empty) and puts the reason in *why when given.
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text,
                                                        std::string* why = nullptr);

/// Formats d compactly for people: "850ms", "12.3s", "4m05s".
std::string format_duration(std::chrono::milliseconds d);

}  // namespace deadbolt
