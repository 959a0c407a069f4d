#include "net/status.hpp"

#include <fmt/format.h>

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
    if (has("NOPERM"))
        return Status::error(
            errc::permission_denied,
            msg("the ACL user may not run this command or touch this key: grant "
                "+eval +evalsha +get +set +pttl +publish +subscribe on the lock keys"));
    if (auto at = t.find("DEADBOLT-USAGE "); at != std::string_view::npos) {
        auto rest = t.substr(at + 15);
        return Status::error(errc::invalid_argument,
                             std::string(rest.substr(0, rest.find(" script:"))));
    }
    if (has("WRONGTYPE"))
        return Status::error(errc::wrong_type,
                             msg("a key under this lock name holds another type: delete it or "
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
    return Status::error(errc::server_error, msg("the server refused the request"));
}

}  // namespace deadbolt::detail
