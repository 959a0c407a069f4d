// Validity: how long a holder may trust its lease, and which names and TTLs are acceptable.
// Pure; unit-tested without a server.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.hpp"
#include "deadbolt/leader_election.hpp"
#include "deadbolt/options.hpp"
#include "deadbolt/rate_limiter.hpp"

namespace deadbolt::detail {

using Clock = std::chrono::steady_clock;

/// Clock drift allowance subtracted from every lease: 1% of the TTL plus 2 ms.
constexpr std::chrono::microseconds drift_margin(std::chrono::milliseconds ttl) {
    return std::chrono::microseconds(ttl.count() * 10) + std::chrono::milliseconds(2);
}

/// The local deadline of a lease whose request was sent at sent_at (measured before sending).
constexpr Clock::time_point validity_deadline(Clock::time_point sent_at,
                                              std::chrono::milliseconds ttl) {
    return sent_at + ttl - drift_margin(ttl);
}

/// Names are 1..kMaxNameBytes arbitrary bytes.
Status validate_name(std::string_view name);
/// A MultiLock's names: 1 to kMaxMultiNames valid names, none twice.
Status validate_names(const std::vector<std::string>& names);
/// rate and burst in 1..1e9, per in 1 ms..kMaxTtl.
Status validate_rate_limit(const RateLimit& limit);
/// A leader's value: at most kMaxLeaderValueBytes.
Status validate_leader_value(std::string_view value);
/// A TTL within [kMinTtl, kMaxTtl]; `what` names the option in the message.
Status validate_ttl(std::chrono::milliseconds ttl, std::string_view what);
/// Every field of MutexOptions, e.g. renew_every < ttl and non-negative bounds.
Status validate_options(const MutexOptions& o);
/// The ClientOptions no URL sets: loop_spin not negative.
Status validate_options(const ClientOptions& o);

}  // namespace deadbolt::detail
