// take: one acquisition for the lock-like front ends, in both error styles (throw, or
// std::error_code), so each primitive states only its spec.
#pragma once

#include <chrono>
#include <exception>
#include <memory>
#include <system_error>
#include <type_traits>

#include "core/acquire.hpp"
#include "core/lease_state.hpp"
#include "core/lock_spec.hpp"
#include "deadbolt/lease.hpp"

namespace deadbolt::detail {

/// Acquires spec by deadline (time_point::max() = wait as long as it takes). True with out
/// set when granted; false when the deadline passed. Other failures throw, or when ec is
/// given they are stored there (and false returned) without throwing.
bool take(const std::shared_ptr<ClientImpl>& client, const LockSpec& spec,
          Clock::time_point deadline, Lease& out, std::error_code* ec, SpareClaim* spare = nullptr);

/// For the noexcept std::error_code overloads: runs f; if it throws (building a spec's strings,
/// the one thing left to fail once take() has ec, can only run out of memory), sets ec to
/// not_enough_memory and returns a value-initialized result (false, an empty Lease).
template <class F>
auto without_throwing(std::error_code& ec, F&& f) noexcept -> std::invoke_result_t<F> {
    try {
        return f();
    } catch (const std::exception&) {
        ec = std::make_error_code(std::errc::not_enough_memory);
        if constexpr (!std::is_void_v<std::invoke_result_t<F>>) return {};
    }
}

/// The same for callers that hold AcquireOptions (deadline, cancel, on_wait): a passed deadline
/// is LockError(not_acquired), thrown or stored in ec.
Lease take(const std::shared_ptr<ClientImpl>& client, const LockSpec& spec,
           const AcquireOptions& how, std::error_code* ec);

}  // namespace deadbolt::detail
