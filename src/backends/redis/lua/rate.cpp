// RateLimiter: a token bucket in a hash {tokens, ts, cfg}, refilled from the server's clock.
#include "backends/redis/scripts.hpp"

namespace deadbolt::detail {
namespace {

// KEYS: bucket. ARGV: rate, per_ms, burst, n (n = 0 only looks). Returns {allowed, wait_ms,
// whole tokens left}. Written only when tokens are taken; the key expires once it would be
// full again, which is the same as no key.
constexpr std::string_view kTake = R"lua(
local rate, per, burst, n = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]),
  tonumber(ARGV[4])
local cfg = ARGV[1] .. '/' .. ARGV[2] .. 'ms/' .. ARGV[3]
local found = kind_of(KEYS[1])
if found and found ~= 'rate' then return refuse(KEYS[1], found, 'a RateLimiter') end
local h = redis.call('HMGET', KEYS[1], 'tokens', 'ts', 'cfg')
local now = now_ms()
local tokens = burst
if h[1] then
  if h[3] ~= cfg then
    return redis.error_reply('DEADBOLT-USAGE the rate limiter is used with rate/per/burst ' ..
      tostring(h[3]) .. ' but this client asked for ' .. cfg .. ': every user of a name must agree')
  end
  tokens = math.min(burst, tonumber(h[1]) + math.max(0, now - tonumber(h[2])) * rate / per)
end
if n == 0 or tokens < n then
  local wait = 0
  if tokens < n then wait = math.ceil((n - tokens) * per / rate) end
  return {0, wait, math.floor(tokens)}
end
tokens = tokens - n
redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens), 'ts', now, 'cfg', cfg)
redis.call('PEXPIRE', KEYS[1], math.min(math.ceil((burst - tokens) * per / rate) + 1, 1e12))
return {1, 0, math.floor(tokens)}
)lua";

}  // namespace

const Script& rate_take_script() {
    static const Script s = make_script("rate_take", with_helpers(kTake));
    return s;
}

}  // namespace deadbolt::detail
