#include "backends/redis/topology/multi_slots.hpp"
#include "backends/redis/store.hpp"

#include <map>

#include "backends/redis/holding.hpp"
#include "backends/redis/keys.hpp"
#include "backends/redis/scripts.hpp"
#include "backends/redis/topology/server.hpp"
#include "core/client_impl.hpp"
#include "core/renewer.hpp"

namespace deadbolt::detail {

bool multi_spans_slots(const ClientImpl& c, const RedisSpec& spec) {
    return redis(c).cluster && spec.kind == &multi_kind() && spans_slots(spec.op_keys);
}

Status multi_slots_attempt(ClientImpl& c, const RedisSpec& spec, const ScriptCall& call,
                           std::chrono::milliseconds px, Clock::time_point sent_at,
                           AttemptOutcome& out) {
    // call.keys are lock, fence pairs in the order of spec.names, then each name's line (none
    // for an attempt that does not line up); a
    // name's keys share its slot. call.args are the common three, each name's box, then the
    // member and ticket: a part takes its own names' of each.
    const std::size_t n = spec.names.size();
    std::map<std::uint16_t, std::vector<std::size_t>> by_slot;
    for (std::size_t i = 0; i < n; ++i) by_slot[key_slot(call.keys[2 * i])].push_back(i);
    std::vector<ScriptCall> parts;
    for (const auto& [slot, names] : by_slot) {
        ScriptCall& p = parts.emplace_back(
            ScriptCall{call.script, {}, {call.args.begin(), call.args.begin() + 3}});
        for (auto i : names) p.keys.insert(p.keys.end(), {call.keys[2 * i], call.keys[2 * i + 1]});
        for (auto i : names) {
            if (call.keys.size() > 2 * n) p.keys.push_back(call.keys[2 * n + i]);  // in line
            p.args.push_back(call.args[3 + i]);
        }
        p.args.insert(p.args.end(), call.args.end() - 2, call.args.end());
    }
    std::vector<Reply> replies;
    if (Status st = redis(c).server->eval_many(parts, replies, c.deadline()); !st.ok()) return st;

    std::vector<std::uint64_t> fences(spec.names.size(), 0);
    bool all = true, refused = false;
    std::chrono::milliseconds wait{0};
    Status failed;
    std::size_t k = 0;
    for (const auto& [slot, names] : by_slot) {
        const Reply& r = replies[k++];
        AttemptOutcome o;
        Status st = r.is_error() ? from_server_error(r.str) : parse_acquire(r, o);
        if (!st.ok()) {  // maybe granted (a lost reply), or an error: give back, report it
            all = false;
            if (failed.ok()) failed = st;
            continue;
        }
        if (!o.acquired) {
            all = false;
            refused = true;
            if (out.ticket.empty()) out.ticket = o.ticket;
            // Try again once the longest of the holders is gone (or at its release message).
            if (wait.count() >= 0) wait = o.pttl.count() < 0 ? o.pttl : std::max(wait, o.pttl);
            continue;
        }
        if (o.fences.empty()) o.fences.push_back(o.fence);
        for (std::size_t j = 0; j < names.size() && j < o.fences.size(); ++j)
            fences[names[j]] = o.fences[j];
    }
    if (all) {
        out.acquired = true;
        out.fence = fences.front();
        out.fences = std::move(fences);
        return {};
    }
    // Give back every part at once: the release deletes only keys that hold our token, and
    // runs per slot like any MultiLock lease operation.
    auto release = lease_call(*spec.kind->release, spec.op_keys, std::string(call.args[0]),
                              spec.channel, px, spec.op_args);
    Reply rr;
    if (!redis(c).server->eval(release.view(), rr, c.deadline()).ok()) {
        c.renewer->add_cleanup(RedisHolding::held(spec, std::string(call.args[0]), px),
                               sent_at + px);
        out.cleanup_pending = true;
    }
    // A refusal means waiting for the holder; an error that waiting cannot fix ends it.
    if (!failed.ok() && (!refused || !is_retryable(failed.ec))) return failed;
    out.acquired = false;
    out.pttl = wait;
    return {};
}

}  // namespace deadbolt::detail
