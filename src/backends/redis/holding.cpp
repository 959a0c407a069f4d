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

}  // namespace deadbolt::detail
