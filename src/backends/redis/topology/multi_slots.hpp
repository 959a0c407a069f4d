// A MultiLock whose names live in several Redis Cluster slots: each slot's names are taken
// at once by the MultiLock script on their master, every slot in the same round, and the
// holding counts only when every slot granted. A partial grant is given back before anyone
// waits, so two contenders never hold parts while waiting for each other.
#pragma once

#include <chrono>

#include "backends/redis/commands.hpp"
#include "backends/redis/replies.hpp"
#include "backends/redis/specs.hpp"

namespace deadbolt::detail {

struct ClientImpl;

/// True when spec is a MultiLock over a cluster whose names are not all in one slot.
bool multi_spans_slots(const ClientImpl& c, const RedisSpec& spec);

/// One attempt of call (spec's MultiLock script over every name) split per slot. Granted in
/// every slot: out.acquired with a fence per name. Otherwise nothing is kept (the slots that
/// granted, or did not answer, are released; out.cleanup_pending when that was left to the
/// background) and out.pttl says when the longest refusal ends. Fails with a slot's error
/// that retrying now cannot change, or a transport error.
Status multi_slots_attempt(ClientImpl& c, const RedisSpec& spec, const ScriptCall& call,
                           std::chrono::milliseconds px, Clock::time_point sent_at,
                           AttemptOutcome& out);

}  // namespace deadbolt::detail
