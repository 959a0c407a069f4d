// Scripts: the Lua run by the server, one per lock operation, and their SHA1 for EVALSHA.
// Keys always travel in KEYS and values in ARGV: no Lua source is ever built from user data.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace deadbolt::detail {

struct Script {
    std::string_view name;
    std::string_view source;
    std::string sha1;  // hex, computed once from source
};

/// SET NX PX + fencing. KEYS: lock, fence. ARGV: token, px, fence_px.
/// Returns {1, fence} when acquired, {0, pttl} when held by someone else.
const Script& acquire_script();
/// Compare-and-delete + publish. KEYS: lock. ARGV: token, channel. Returns 1 or 0.
const Script& release_script();
/// Compare-and-pexpire. KEYS: lock. ARGV: token, px. Returns 1 or 0.
const Script& extend_script();
/// Write if fence >= highest seen. KEYS: data, record. ARGV: fence, value.
/// Returns {1, fence} or {0, highest}.
const Script& fenced_set_script();
/// SET NX PX or report PTTL. KEYS: key. ARGV: window_ms. Returns -2 when recorded, else PTTL.
const Script& throttle_script();

/// Hex SHA1 of data (what Redis uses to name a script).
std::string sha1_hex(std::string_view data);

/// Appends EVALSHA sha numkeys keys... args... to out.
void encode_evalsha(std::string& out, const Script& s, const std::vector<std::string_view>& keys,
                    const std::vector<std::string_view>& args);
/// Appends EVAL source numkeys keys... args... to out (after NOSCRIPT).
void encode_eval(std::string& out, const Script& s, const std::vector<std::string_view>& keys,
                 const std::vector<std::string_view>& args);

}  // namespace deadbolt::detail
