#include "core/quorum.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace deadbolt::detail {

std::uint64_t redlock_fence(const std::vector<std::uint64_t>& counters, std::uint64_t floor_us) {
    std::uint64_t high = floor_us;
    for (auto c : counters) high = std::max(high, c);
    return high + 1;
}

std::chrono::milliseconds node_timeout(std::chrono::milliseconds ttl,
                                       std::chrono::milliseconds command_timeout) {
    return std::max(std::chrono::milliseconds(1), std::min(ttl / 10, command_timeout));
}

NodeSetCheck check_node_set(const std::vector<std::string>& addresses, bool allow_fewer) {
    NodeSetCheck out;
    std::set<std::string> seen;
    for (const auto& a : addresses)
        if (!seen.insert(a).second) {
            out.status = Status::error(
                errc::invalid_argument,
                fmt::format("redlock node {} is listed twice: its vote would count twice; list "
                            "each independent master once",
                            a));
            return out;
        }
    auto n = addresses.size();
    if (n < 3 && !allow_fewer) {
        out.status = Status::error(
            errc::invalid_argument,
            fmt::format("redlock needs at least 3 independent masters, not {}: with fewer, one "
                        "crash stops every lock (add allow_fewer=1 to the URL to accept that)",
                        n));
        return out;
    }
    if (n > 0 && n % 2 == 0)
        out.warning = fmt::format(
            "redlock with {} nodes tolerates {} failures, no more than {} nodes would: use an "
            "odd count",
            n, n - majority(static_cast<int>(n)), n - 1);
    return out;
}

}  // namespace deadbolt::detail
