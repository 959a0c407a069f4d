#include "core/validity.hpp"

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

}  // namespace deadbolt::detail
