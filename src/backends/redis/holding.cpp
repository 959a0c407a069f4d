#include "backends/redis/holding.hpp"

namespace deadbolt::detail {

std::shared_ptr<RedisHolding> RedisHolding::held(std::shared_ptr<const RedisSpec> spec,
                                                 std::string token, std::chrono::milliseconds px) {
    auto h = std::make_shared<RedisHolding>();
    h->kind = spec->kind;
    h->release = spec->kind->release;
    h->spec = std::move(spec);
    h->token = std::move(token);
    h->px = px;
    return h;
}

std::shared_ptr<RedisHolding> RedisHolding::held(const RedisSpec& spec, std::string token,
                                                 std::chrono::milliseconds px) {
    return held(std::make_shared<const RedisSpec>(spec), std::move(token), px);
}

std::shared_ptr<RedisHolding> RedisHolding::waiting(std::shared_ptr<const RedisSpec> spec,
                                                    std::string token,
                                                    std::chrono::milliseconds px) {
    auto h = held(std::move(spec), std::move(token), px);
    h->kind = nullptr;
    h->release = h->spec->abandon;
    h->waiter = true;  // its keys are the abandon's, and leaving a line needs the line
    h->own_args = h->spec->op_args;
    return h;
}

ScriptCall RedisHolding::call(const Script& script, const std::string& px_s) const {
    const auto& k = keys();
    const auto& a = args();
    ScriptCall c{&script, {k.begin(), k.end()}, {token, spec->channel, px_s}};
    c.args.insert(c.args.end(), a.begin(), a.end());
    if (&script == release && !fence_at_most.empty()) c.args.push_back(fence_at_most);
    if (&script == release && !waiter)
        c.fallback_keys.assign(spec->lineless_keys.begin(), spec->lineless_keys.end());
    return c;
}

ScriptCall RedisHolding::lease_call(const Script& script, const std::string& px_s) const {
    ScriptCall c = call(script, px_s);
    const auto& k = lease_keys();
    c.keys.assign(k.begin(), k.end());
    c.fallback_keys.clear();
    return c;
}

std::vector<std::string_view> RedisHolding::main_keys() const {
    std::vector<std::string_view> out;
    const auto& keys = this->keys();
    if (keys.empty()) return out;
    // A MultiLock's keys are each name's lock and line, in turn.
    std::size_t step = kind == &multi_kind() ? 2 : keys.size();
    for (std::size_t i = 0; i < keys.size(); i += step) out.push_back(keys[i]);
    return out;
}

}  // namespace deadbolt::detail
