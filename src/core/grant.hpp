// What both acquire drivers (blocking and asynchronous) do with the machine's outcome: make
// the lease of a grant, and tell the observer.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <system_error>

#include "core/acquire_fsm.hpp"
#include "core/lease_state.hpp"
#include "core/lock_spec.hpp"
#include "core/store.hpp"
#include "deadbolt/acquire_options.hpp"
#include "deadbolt/events.hpp"

namespace deadbolt::detail {

struct ClientImpl;

/// Ok when spec's name(s) and options are valid; else the error that says why
/// (invalid_argument).
Status validated(const LockSpec& spec);

/// Ok when spec may be acquired on store: its name(s) and options are valid and the engine
/// keeps its shape; else the error that says why (invalid_argument).
Status admissible(const Store& store, const LockSpec& spec);

/// asked, or (in cut) asked with its ttl cut to what store keeps (Store::longest_ttl).
const LockSpec& fitted(const Store& store, const LockSpec& asked, std::optional<LockSpec>& cut);

/// The machine's rules for acquiring spec through claim as how says (px: how long the engine
/// keeps a grant).
AcquireRules rules_for(ClientImpl& c, const LockSpec& spec, const Claim& claim,
                       const AcquireOptions& how, std::chrono::milliseconds px);

/// The lease of token's grant of spec through claim: kept by the engine for px, valid on
/// the client until valid_until, counted from sent_at. in_local_queue: the acquisition lined
/// up in this process's local queue, which the lease leaves when it ends.
std::shared_ptr<LeaseState> make_state(const std::shared_ptr<ClientImpl>& client,
                                       const LockSpec& spec, const Claim& claim, std::string token,
                                       Fences fences, std::chrono::milliseconds px,
                                       Clock::time_point sent_at, Clock::time_point valid_until,
                                       bool in_local_queue);

/// Tells c's observer what an attempt a of spec came back with (refused, or unknown outcome);
/// counts a refusal in refusals (the acquisition's so far).
void tell_attempt(const ClientImpl& c, const LockSpec& spec, const Attempted& a,
                  Clock::time_point started, std::uint32_t& refusals);

/// Tells c's observer (if any) what happened to an acquisition of spec that started at
/// started and met refusals refusals; a is its last attempt.
void tell_acquire(const ClientImpl& c, const LockSpec& spec, LockEventKind kind, const Attempted& a,
                  Clock::time_point started, std::uint32_t refusals, std::error_code error = {},
                  std::uint64_t fence = 0);

}  // namespace deadbolt::detail
