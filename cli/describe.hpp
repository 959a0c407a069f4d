// How a lock's state reads: the text and JSON `status` and `list` print.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "deadbolt/deadbolt.hpp"

namespace deadbolt::cli {

/// "NAME: held, ..." and one indented line per holder (and the leader's value), each ending in
/// a newline.
std::string status_text(std::string_view name, const LockStatus& s);

/// One JSON object: name, key, held, kind, ttl_ms, holders, waiters, permits, last_fence,
/// writer_waiting, held_by (host, pid, since as RFC 3339 UTC or null, ttl_ms) and value.
nlohmann::json status_json(std::string_view name, std::string_view key, const LockStatus& s);

/// "web-3 pid 4121" for a holder deadbolt wrote, else what is known of it.
std::string holder_text(const Holder& h);

/// "2026-11-23 22:41:07 UTC" (text) or "2026-11-23T22:41:07.123Z" (rfc3339).
std::string utc_time(std::chrono::system_clock::time_point t, bool rfc3339);

}  // namespace deadbolt::cli
