#include "backends/redis/holding.hpp"

namespace deadbolt::detail {

std::shared_ptr<RedisHolding> RedisHolding::held(const RedisSpec& spec, std::string token,
                                                 std::chrono::milliseconds px) {
    auto h = std::make_shared<RedisHolding>();
    h->kind = spec.kind;
    h->release = spec.kind->release;
    h->keys = spec.op_keys;
    h->lease_keys = spec.lease_keys.empty() ? spec.op_keys : spec.lease_keys;
    h->lineless_keys = spec.lineless_keys;
    h->args = spec.op_args;
    h->token = std::move(token);
    h->channel = spec.channel;
    h->px = px;
    return h;
}

std::shared_ptr<RedisHolding> RedisHolding::waiting(const RedisSpec& spec, std::string token,
                                                    std::chrono::milliseconds px) {
    auto h = held(spec, std::move(token), px);
    h->kind = nullptr;
    h->release = spec.abandon;
    h->keys = spec.abandon_keys;
    h->lineless_keys.clear();  // leaving a line needs the line
    return h;
}

ScriptCall RedisHolding::call(const Script& script, const std::string& px_s) const {
    ScriptCall c{&script, {keys.begin(), keys.end()}, {token, channel, px_s}};
    c.args.insert(c.args.end(), args.begin(), args.end());
    if (&script == release) c.fallback_keys.assign(lineless_keys.begin(), lineless_keys.end());
    return c;
}

ScriptCall RedisHolding::lease_call(const Script& script, const std::string& px_s) const {
    ScriptCall c = call(script, px_s);
    c.keys.assign(lease_keys.begin(), lease_keys.end());
    c.fallback_keys.clear();
    return c;
}

std::vector<std::string_view> RedisHolding::main_keys() const {
    std::vector<std::string_view> out;
    if (keys.empty()) return out;
    // A MultiLock's keys are each name's lock and line, in turn.
    std::size_t step = kind == &multi_kind() ? 2 : keys.size();
    for (std::size_t i = 0; i < keys.size(); i += step) out.push_back(keys[i]);
    return out;
}

}  // namespace deadbolt::detail
