// Where deadbolt keeps a lock in memcached: the lock's item, its fence counter and a
// semaphore's permit slots, each under a key both protocols take (printable, no space, at
// most 250 bytes). A name that is such a key already is its own key (after the client's
// prefix), so other tools see it; any other (binary, spaced, starting with '~') is "~b~" and
// its base64, or "~h~" and its SHA-256 in hex when that would be too long. Keys deadbolt adds
// beside a lock start with "~f~" (the fence) or "~p<i>~" (slot i), which no name's key does.
// Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace deadbolt::detail {

struct McKeys {
    std::string prefix;  // the client's
    std::string coded;   // the name as a key (without the prefix)
    std::string lock() const { return prefix + coded; }
    std::string fence() const { return prefix + "~f~" + coded; }
    std::string slot(int i) const { return prefix + "~p" + std::to_string(i) + "~" + coded; }
};
McKeys mc_keys(std::string_view prefix, std::string_view name);

/// Whether a prefix can start keys: printable, no space, short.
bool mc_prefix_ok(std::string_view prefix);

/// The name of the lock whose item key is (as `list` shows it): nullopt for a key without
/// the prefix or one of deadbolt's side keys; a hashed name shows as its "~h~..." form.
std::optional<std::string> mc_name_of(std::string_view prefix, std::string_view key);

}  // namespace deadbolt::detail
