#include "backends/redis/topology/slot_split.hpp"

#include <map>

#include "backends/redis/keys.hpp"
#include "backends/redis/scripts.hpp"

namespace deadbolt::detail {
namespace {

// A call that runs as one part per slot: a per-key script whose keys span slots.
bool splittable(const ScriptCall& c) {
    return c.script->per_key_after >= 0 && spans_slots(c.keys);
}

}  // namespace

SlotSplit split_by_slot(std::span<const ScriptCall> calls) {
    SlotSplit s;
    bool any = false;
    for (const auto& c : calls) any = any || splittable(c);
    if (!any) return s;  // the common case costs one look at each call's keys
    for (std::size_t i = 0; i < calls.size(); ++i) {
        const auto& c = calls[i];
        if (!splittable(c)) {
            s.calls.push_back(c);
            s.origin.push_back(i);
            continue;
        }
        s.split = true;
        auto common = static_cast<std::size_t>(c.script->per_key_after);
        bool keyed_args = c.args.size() == common + c.keys.size();
        std::map<std::uint16_t, ScriptCall> parts;  // by slot: a stable order
        for (std::size_t k = 0; k < c.keys.size(); ++k) {
            auto [it, fresh] = parts.try_emplace(key_slot(c.keys[k]));
            auto& part = it->second;
            if (fresh) {
                part.script = c.script;
                auto end = keyed_args ? c.args.begin() + static_cast<std::ptrdiff_t>(common)
                                      : c.args.end();
                part.args.assign(c.args.begin(), end);
            }
            part.keys.push_back(c.keys[k]);
            if (keyed_args) part.args.push_back(c.args[common + k]);
        }
        for (auto& [slot, part] : parts) {
            s.calls.push_back(std::move(part));
            s.origin.push_back(i);
        }
    }
    return s;
}

std::vector<Reply> merge_parts(const SlotSplit& s, std::vector<Reply> part_replies, std::size_t n) {
    std::vector<Reply> out(n);
    std::vector<bool> seen(n, false);
    for (std::size_t j = 0; j < part_replies.size() && j < s.origin.size(); ++j) {
        auto i = s.origin[j];
        Reply& r = part_replies[j];
        Reply& o = out[i];
        if (!seen[i]) {
            o = std::move(r);
            seen[i] = true;
            continue;
        }
        if (o.is_error()) continue;  // the first error reply stands
        if (r.is_error()) {
            o = std::move(r);
            continue;
        }
        if (o.type != Reply::Type::integer || r.type != Reply::Type::integer) {
            o.type = Reply::Type::error;
            o.str = "ERR a part of a split call answered something other than a count";
            continue;
        }
        // 0 (not ours) anywhere makes the whole 0; else 1 + the parts' counts.
        if (o.integer == 0 || r.integer == 0)
            o.integer = 0;
        else
            o.integer += r.integer - 1;
    }
    return out;
}

}  // namespace deadbolt::detail
