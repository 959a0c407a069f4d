// Connecting to etcd (etcd://, etcds://): what Client::connect does for etcd URLs.
#pragma once

#include <string_view>

#include "deadbolt/client.hpp"

namespace deadbolt::detail {

/// A client of the etcd cluster url names, connected (authenticated when the URL names a
/// user) and proven by one read. Throws UsageError for a bad URL, ConnectionError when no
/// member answers, AuthError for a wrong user or password.
Client connect_etcd(std::string_view url, const ClientOptions& options);

}  // namespace deadbolt::detail
