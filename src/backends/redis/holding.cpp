#include "backends/redis/holding.hpp"

namespace deadbolt::detail {

std::shared_ptr<RedisHolding> RedisHolding::held(const RedisSpec& spec, std::string token,
                                                 std::chrono::milliseconds px) {
    auto h = std::make_shared<RedisHolding>();
    h->kind = spec.kind;
    h->release = spec.kind->release;
    h->keys = spec.op_keys;
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
    return h;
}

ScriptCall RedisHolding::call(const Script& script, const std::string& px_s) const {
    ScriptCall c{&script, {keys.begin(), keys.end()}, {token, channel, px_s}};
    c.args.insert(c.args.end(), args.begin(), args.end());
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
