// AcquireOptions: how long an acquisition waits and how it can be interrupted.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <stop_token>
#include <system_error>

namespace deadbolt {

/// What a waiter knows while it waits; passed to AcquireOptions::on_wait.
struct WaitInfo {
    std::chrono::milliseconds waited{};      ///< Time since acquire() started.
    std::chrono::milliseconds holder_ttl{};  ///< Holder's remaining TTL at the last attempt;
                                             ///< -1 ms if the key has no expiry.
    /// The connection error the last attempt met, which the waiter rides out (retrying with
    /// backoff until its deadline); empty when the server answered.
    std::error_code retrying{};
};

/// How long acquire() waits and how it can be interrupted.
struct AcquireOptions {
    /// Give up at this instant; nullopt = wait as long as it takes; a past instant = try once.
    /// Until a deadline, a server that cannot be reached or restarts is waited out (retried
    /// with backoff; see WaitInfo::retrying); without one, such an error ends the wait.
    std::optional<std::chrono::steady_clock::time_point> deadline{};
    std::stop_token cancel{};  ///< Requesting stop aborts the wait (cancelled).
    std::function<void(const WaitInfo&)> on_wait{};  ///< Called after each failed attempt.
};

}  // namespace deadbolt
