#include "core/validity.hpp"

#include <set>

#include <fmt/format.h>

#include "deadbolt/duration.hpp"

namespace deadbolt::detail {

Status validate_name(std::string_view name) {
    if (name.empty())
        return Status::error(errc::invalid_argument, "lock name is empty: give every lock a name");
    if (name.size() > kMaxNameBytes)
        return Status::error(errc::invalid_argument,
                             fmt::format("lock name is {} bytes, over the limit of {}: hash long "
                                         "names (e.g. SHA-256 hex) before using them",
                                         name.size(), kMaxNameBytes));
    return {};
}

Status validate_names(const std::vector<std::string>& names) {
    if (names.empty())
        return Status::error(errc::invalid_argument, "MultiLock needs at least one name");
    if (names.size() > kMaxMultiNames)
        return Status::error(errc::invalid_argument,
                             fmt::format("MultiLock of {} names is over the limit of {}: split "
                                         "the set or lock a name that stands for the group",
                                         names.size(), kMaxMultiNames));
    std::set<std::string_view> seen;
    for (const auto& n : names) {
        if (Status st = validate_name(n); !st.ok()) return st;
        if (!seen.insert(n).second)
            return Status::error(errc::invalid_argument,
                                 fmt::format("MultiLock lists the name '{}' twice: a set of "
                                             "locks names each lock once",
                                             n.size() > 64 ? n.substr(0, 64) + "..." : n));
    }
    return {};
}

Status validate_rate_limit(const RateLimit& l) {
    constexpr std::int64_t kMax = 1'000'000'000;
    if (l.rate < 1 || l.rate > kMax)
        return Status::error(errc::invalid_argument,
                             fmt::format("rate limiter rate of {} is out of range: it must be "
                                         "between 1 and {} tokens per period",
                                         l.rate, kMax));
    if (l.burst < 1 || l.burst > kMax)
        return Status::error(errc::invalid_argument,
                             fmt::format("rate limiter burst of {} is out of range: it must be "
                                         "between 1 and {}",
                                         l.burst, kMax));
    if (l.per < std::chrono::milliseconds(1) || l.per > kMaxTtl)
        return Status::error(errc::invalid_argument,
                             fmt::format("rate limiter period of {} ms is out of range: it must "
                                         "be between 1 ms and {}",
                                         l.per.count(), format_duration(kMaxTtl)));
    return {};
}

Status validate_leader_value(std::string_view value) {
    if (value.size() > kMaxLeaderValueBytes)
        return Status::error(errc::invalid_argument,
                             fmt::format("leader value is {} bytes, over the limit of {}: "
                                         "proclaim where to find the data, not the data",
                                         value.size(), kMaxLeaderValueBytes));
    return {};
}

Status validate_ttl(std::chrono::milliseconds ttl, std::string_view what) {
    if (ttl < kMinTtl || ttl > kMaxTtl)
        return Status::error(
            errc::invalid_argument,
            fmt::format("{} of {} ms is out of range: it must be between {} and {}", what,
                        ttl.count(), format_duration(kMinTtl), format_duration(kMaxTtl)));
    return {};
}

Status validate_options(const MutexOptions& o) {
    if (auto st = validate_ttl(o.ttl, "ttl"); !st.ok()) return st;
    auto bad = [](std::string msg) {
        return Status::error(errc::invalid_argument, std::move(msg));
    };
    if (o.renew_every.count() < 0 || (o.renew_every.count() > 0 && o.renew_every >= o.ttl))
        return bad(
            fmt::format("renew_every of {} ms must be positive and shorter than the ttl "
                        "({} ms), or 0 for ttl/3",
                        o.renew_every.count(), o.ttl.count()));
    if (o.max_hold.count() < 0) return bad("max_hold must not be negative (0 = no bound)");
    if (o.lock_delay.count() < 0 || o.lock_delay > kMaxTtl)
        return bad(fmt::format("lock_delay of {} ms must be between 0 and {}", o.lock_delay.count(),
                               format_duration(kMaxTtl)));
    if (o.wait_jitter.count() < 0) return bad("wait_jitter must not be negative");
    if (auto st = validate_ttl(o.waiter_ttl, "waiter_ttl"); !st.ok()) return st;
    if (o.handoff_grace.count() < 0 || o.handoff_grace > o.ttl)
        return bad(fmt::format("handoff_grace of {} ms must be between 0 and the ttl ({} ms)",
                               o.handoff_grace.count(), o.ttl.count()));
    return {};
}

Status validate_options(const ClientOptions& o) {
    if (o.loop_spin.count() < 0)
        return Status::error(errc::invalid_argument,
                             fmt::format("loop_spin must not be negative (0 = sleep at once), "
                                         "not {} us",
                                         o.loop_spin.count()));
    return {};
}

}  // namespace deadbolt::detail
