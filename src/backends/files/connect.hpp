// Connecting a Client to a lock directory (file://).
#pragma once

#include <string_view>

#include "deadbolt/client.hpp"

namespace deadbolt::detail {

/// A client of the lock directory url names, made (mode 0777 and sticky, as /tmp) when
/// missing. Throws UsageError for a bad URL, a path that is not a directory, one this process
/// may not write, or one on NFS (its locks are not the kernel's own).
Client connect_file(std::string_view url, const ClientOptions& options);

}  // namespace deadbolt::detail
