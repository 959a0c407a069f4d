// memory://NAME: an engine inside the process, for the tests of code that uses deadbolt
// (link deadbolt::memory). Every Client connected to memory://NAME shares one space of locks,
// so two instances of a service can contend in one test; a Space of the same NAME drives the
// faults a real engine has: a holding lost, a reply lost, a stalled engine, time passing.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace deadbolt {
namespace detail {
class MemorySpace;
}

namespace memory {

/// Which calls a lost reply applies to.
enum class Call : unsigned char {
    any,      ///< Whichever call comes next.
    acquire,  ///< An acquisition's attempt (each look of a waiter is one).
    renew,    ///< An extension: a renewal in the background, or Lease::extend.
    release,  ///< A release.
    check,    ///< A check whether a holding is still ours (Lease::is_current, a loss check).
    other,    ///< Anything else: latches, rate limiters, elections, status, fenced data.
};

/// The space of memory://NAME as a test sees it: its clock and its faults. Its state lives while
/// a Client connected to it or a Space of its name does, and is gone after the last of them.
class Space {
  public:
    /// The space of memory://name (the URL's NAME, decoded). Throws UsageError for an empty
    /// name or one with a NUL.
    explicit Space(std::string_view name);

    /// Drops every holding of lock name now, as an engine that lost it would (a restart, an
    /// operator's delete): its holders' stop tokens and on_lost fire within moments and their
    /// waiters are woken. Returns how many holdings were dropped. Never throws.
    int lose(std::string_view name) noexcept;
    /// lose() for every lock of the space.
    int lose_all() noexcept;

    /// The next n calls of kind which are carried out but their replies are lost: the caller
    /// gets unknown_outcome (an acquisition may be held for it, a release may have happened),
    /// as after a connection cut between request and reply. Renewals in the background count
    /// as calls. Never throws.
    void lose_replies(int n = 1, Call which = Call::any) noexcept;

    /// Calls wait until resume(); one whose deadline (ClientOptions::command_timeout) passes
    /// first fails with timeout and is not carried out, as against a server that stopped
    /// answering. Holdings keep expiring meanwhile. Never throws.
    void stall() noexcept;
    /// Ends a stall: the waiting calls are carried out. Never throws.
    void resume() noexcept;

    /// Moves the space's clock forward by d: holdings, latches and rate limiters see d pass at
    /// once (a holding whose TTL ends within d expires and its holder hears of the loss), and
    /// clients that set no ClientOptions::clock measure their leases on this clock, so their
    /// validity moves too. Throws UsageError for a negative d.
    void advance(std::chrono::milliseconds d);
    /// The space's clock: the steady clock plus every advance().
    std::chrono::steady_clock::time_point now() const noexcept;

    /// The value Lease::put_if_current last wrote under key; nullopt when none did.
    std::optional<std::string> value(std::string_view key) const;

    const std::string& name() const noexcept;

  private:
    std::shared_ptr<detail::MemorySpace> s_;
};

}  // namespace memory
}  // namespace deadbolt
