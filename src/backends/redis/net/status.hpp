// Redis server errors mapped to a Status.
#pragma once

#include <string_view>

#include "core/status.hpp"

namespace deadbolt::detail {

/// Maps a server error reply ("WRONGTYPE ...", "NOPERM ...", "OOM ...") to a Status.
Status from_server_error(std::string_view reply_text);

}  // namespace deadbolt::detail
