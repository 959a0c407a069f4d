// Redis server errors mapped to a Status.
#pragma once

#include <string_view>

#include "core/status.hpp"

namespace deadbolt::detail {

/// Maps a server error reply ("WRONGTYPE ...", "NOPERM ...", "OOM ...") to a Status.
Status from_server_error(std::string_view reply_text);

/// Whether a request that failed so was never sent (the session could not be opened, or was
/// gone before the write): sending it again elsewhere cannot run it twice.
bool nothing_sent(const Status& st);

}  // namespace deadbolt::detail
