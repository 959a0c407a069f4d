#include "backends/redis/topology/replication.hpp"

#include <fmt/format.h>

#include "backends/redis/commands.hpp"
#include "deadbolt/duration.hpp"

namespace deadbolt::detail {

Status confirm_replicated(Connection& c, Clock::time_point deadline) {
    const auto& o = c.endpoint().redis;
    if (o.sync_replicas <= 0) return {};
    std::string n = std::to_string(o.sync_replicas);
    std::string ms = std::to_string(o.sync_timeout.count());
    Reply r;
    if (Status st = command(c, {"WAIT", n, ms}, r, deadline + o.sync_timeout); !st.ok()) return st;
    if (r.type != Reply::Type::integer)
        return Status::error(errc::protocol_error, "WAIT answered something that is not a count");
    if (r.integer >= o.sync_replicas) return {};
    return Status::error(errc::not_replicated,
                         fmt::format("only {} of the {} replicas asked for (sync_replicas) "
                                     "acknowledged the lock's write within {}: check the "
                                     "replicas' health, or lower sync_replicas",
                                     r.integer, o.sync_replicas, format_duration(o.sync_timeout)));
}

}  // namespace deadbolt::detail
