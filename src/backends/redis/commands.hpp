// Commands: plain commands and scripts over a Connection, with NOSCRIPT recovery.
#pragma once

#include <chrono>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backends/redis/net/connection.hpp"
#include "backends/redis/scripts.hpp"

namespace deadbolt::detail {

struct ScriptCall {
    const Script* script;
    std::vector<std::string_view> keys;
    std::vector<std::string_view> args;
    // KEYS to send instead when a cluster slot that migrates answers TRYAGAIN (nothing ran):
    // the same layout with a key that may be absent (a line nobody waits in) swapped for one
    // the script treats as absent. Empty: none; the call waits for the move to end.
    std::vector<std::string_view> fallback_keys{};
};

/// A ScriptCall that owns its strings (kept for later, e.g. a background cleanup).
struct OwnedCall {
    const Script* script = nullptr;
    std::vector<std::string> keys;
    std::vector<std::string> args;
    std::vector<std::string> fallback_keys{};
    ScriptCall view() const;
};

/// A call of one of a lease kind's scripts: KEYS = op_keys, ARGV = {token, channel, px,
/// op_args...}.
OwnedCall lease_call(const Script& script, const std::vector<std::string>& op_keys,
                     const std::string& token, const std::string& channel,
                     std::chrono::milliseconds px, const std::vector<std::string>& op_args);

/// A copy of call that owns its keys and arguments.
OwnedCall owned(const ScriptCall& call);
/// The calls as one pipeline of EVALSHAs.
std::string encode_calls(std::span<const ScriptCall> calls);

/// True for the NOSCRIPT error reply (the server does not know the script's SHA1).
bool is_noscript(const Reply& r);

/// Runs calls as one pipeline of EVALSHA; any that hit NOSCRIPT (after SCRIPT FLUSH or a
/// restart) are re-sent once with EVAL. Error replies stay in replies for the caller.
Status eval_many(Connection& c, std::span<const ScriptCall> calls, std::vector<Reply>& replies,
                 Clock::time_point deadline);

/// One script; an error reply becomes the returned Status.
Status eval(Connection& c, const ScriptCall& call, Reply& reply, Clock::time_point deadline);

/// One plain command; an error reply becomes the returned Status.
Status command(Connection& c, const std::vector<std::string_view>& argv, Reply& reply,
               Clock::time_point deadline);

/// Several plain commands in one pipeline; the first error reply becomes the Status.
Status pipeline(Connection& c, const std::vector<std::vector<std::string_view>>& cmds,
                std::vector<Reply>& replies, Clock::time_point deadline);

}  // namespace deadbolt::detail
