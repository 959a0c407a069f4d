#include "backends/redis/net/status.hpp"

#include <fmt/format.h>

#include "backends/redis/acl.hpp"

namespace deadbolt::detail {

Status from_server_error(std::string_view t) {
    auto starts = [&](std::string_view p) { return t.substr(0, p.size()) == p; };
    // Errors raised inside scripts may arrive wrapped ("ERR ... script: WRONGTYPE ...").
    auto has = [&](std::string_view p) { return t.find(p) != std::string_view::npos; };
    auto msg = [&](std::string_view what) { return fmt::format("{} (server said: {})", what, t); };
    if (starts("WRONGPASS") || starts("NOAUTH") || starts("ERR invalid password") ||
        starts("ERR AUTH") || starts("ERR Client sent AUTH"))
        return Status::error(errc::auth_failed,
                             msg("authentication failed: check the user and password in the URL"));
    if (auto cmd = has("can't run this command") ? refused_command(t) : ""; !cmd.empty())
        return Status::error(
            errc::permission_denied,
            msg(fmt::format("the ACL user may not run {}: {}", cmd, acl_grant_hint())));
    if (has("can't publish to the channel") || has("permissions to access one of the channels"))
        return Status::error(errc::permission_denied,
                             msg("the ACL user may not publish or subscribe to the lock's "
                                 "channels: " +
                                 acl_grant_hint()));
    if (has("permissions to access one of the keys"))
        return Status::error(
            errc::permission_denied,
            msg("the ACL user may not touch the lock's keys: " + acl_grant_hint()));
    if (auto at = t.find("permissions to run the '"); at != std::string_view::npos) {
        auto cmd = t.substr(at + 24);
        return Status::error(errc::permission_denied,
                             msg(fmt::format("the ACL user may not run {}: {}",
                                             cmd.substr(0, cmd.find('\'')), acl_grant_hint())));
    }
    if (has("NOPERM") || has("can't run this command"))
        return Status::error(
            errc::permission_denied,
            msg("the ACL user may not run a command deadbolt needs: " + acl_grant_hint()));
    if (auto at = t.find("DEADBOLT-USAGE "); at != std::string_view::npos) {
        auto rest = t.substr(at + 15);
        return Status::error(errc::invalid_argument,
                             std::string(rest.substr(0, rest.find(" script:"))));
    }
    if (auto at = t.find("DEADBOLT-KIND "); at != std::string_view::npos) {
        auto rest = t.substr(at + 14);
        return Status::error(errc::wrong_type,
                             fmt::format("{}: one name is one kind of lock (readers and exclusive "
                                         "locks excepted, which wait for each other); use "
                                         "another name, or this kind once the name is free",
                                         rest.substr(0, rest.find(" script:"))));
    }
    if (has("WRONGTYPE"))
        return Status::error(errc::wrong_type,
                             msg("a key under this lock name holds data deadbolt did not write: "
                                 "use another name or key prefix"));
    if (has("READONLY"))
        return Status::error(errc::readonly,
                             msg("the server is a read-only replica: connect to the primary"));
    if (starts("OOM"))
        return Status::error(errc::out_of_memory,
                             msg("the server is out of memory: raise maxmemory or free keys"));
    if (starts("LOADING"))
        return Status::error(errc::loading, msg("the server is loading its data"));
    if (starts("BUSY"))
        return Status::error(errc::busy, msg("the server is busy running a script"));
    if (starts("MOVED ") || starts("ASK "))
        return Status::error(errc::invalid_url,
                             msg("this server is one node of a Redis Cluster and another node "
                                 "serves this key: connect with redis-cluster://host:port"));
    if (starts("MASTERDOWN") || starts("TRYAGAIN") || starts("CLUSTERDOWN"))
        return Status::error(errc::busy, msg("the server cannot serve this request now"));
    if (t.find("DB index is out of range") != std::string_view::npos)
        return Status::error(errc::invalid_url,
                             msg("the database number in the URL does not exist"));
    // A server before Redis 7 cannot compile a script that starts with a shebang (make_script).
    if (has("Error compiling script") && has("near '#'"))
        return Status::error(errc::server_error,
                             msg("deadbolt needs Redis 7.0 or later (its scripts carry Redis 7's "
                                 "script flags): upgrade the server"));
    return Status::error(errc::server_error, msg("the server refused the request"));
}

bool nothing_sent(const Status& st) {
    return st.ec == make_error_code(errc::connect_failed) ||
           st.ec == make_error_code(errc::connection_lost);
}

}  // namespace deadbolt::detail
