// Lock names as file names in the lock directory: "<coded>.lock", where coded is the name
// (after the client's prefix) with every byte outside [A-Za-z0-9_.:@-] (and a leading '.')
// as %XX, or "~h~" and its SHA-256 in hex when that is longer than a file name may be. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace deadbolt::detail {

/// The file name (no directory) that keeps name's lock.
std::string lock_file_name(std::string_view prefix, std::string_view name);
/// The name a lock file keeps, for list: nullopt for other files or another prefix; a hashed
/// name shows as its "~h~..." form.
std::optional<std::string> name_of_lock_file(std::string_view prefix, std::string_view file);

}  // namespace deadbolt::detail
