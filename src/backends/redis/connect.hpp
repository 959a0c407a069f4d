// Connecting to Redis (redis://, rediss://, unix://, redlock://, redis-sentinel://,
// redis-cluster://): what Client::connect does for Redis URLs.
#pragma once

#include <string_view>

#include "deadbolt/client.hpp"

namespace deadbolt::detail {

/// A client of the Redis deployment url names, connected and checked (see Client::connect
/// for what is checked and thrown).
Client connect_redis(std::string_view url, const ClientOptions& options);

}  // namespace deadbolt::detail
