// What an ACL user needs for deadbolt: derived from the scripts, so it is never out of date.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "backends/redis/scripts.hpp"
#include "backends/redis/topology/server.hpp"

namespace deadbolt::detail {

/// Every script deadbolt sends.
const std::vector<const Script*>& all_scripts();

/// Every command deadbolt sends to a Redis server it keeps locks on (one server, a Sentinel's
/// primary): the scripts' commands plus the client's own. Upper case, sorted. Topology extras
/// are named by acl_grant_hint.
std::vector<std::string> acl_commands();

/// "ACL SETUSER <user> on >PASSWORD ~... &... +..." for a key prefix: the exact grant deadbolt
/// needs (key patterns cover the auxiliary keys `{<prefix>...}:fence`).
std::string acl_setuser(std::string_view user, std::string_view prefix);

/// One line naming what to grant, for error messages.
std::string acl_grant_hint();

/// The command a script error names by its line ("... script: <sha>, on @user_script:<n>."),
/// upper case ("TIME", "HSET or PEXPIRE"); empty when text is no such error.
std::string refused_command(std::string_view text);

/// Asks the server (one script) whether the connection's ACL user may run every command
/// deadbolt sends and publish/subscribe on the channels of locks under prefix, so a user who
/// lacks one learns it at connect, not from a script refused halfway. errc::permission_denied
/// names every missing grant.
Status check_acl(Server& server, std::string_view user, std::string_view prefix,
                 Clock::time_point deadline);

}  // namespace deadbolt::detail
