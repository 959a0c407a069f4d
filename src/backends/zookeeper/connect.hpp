// Connecting to ZooKeeper (zk://): what Client::connect does for ZooKeeper URLs.
#pragma once

#include <string_view>

#include "deadbolt/client.hpp"

namespace deadbolt::detail {

/// A client of the ensemble url names, with its first session open (digest auth added when
/// the URL names a user) and its chroot found. Throws UsageError for a bad URL, a missing
/// chroot or a session_timeout under the ensemble's shortest, ConnectionError when no server
/// answers.
Client connect_zk(std::string_view url, const ClientOptions& options);

}  // namespace deadbolt::detail
