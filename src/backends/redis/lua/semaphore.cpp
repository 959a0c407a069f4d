// Semaphore scripts: permits are holders in a zset (see holders.cpp); the limit is stored
// beside them so clients that disagree on it get an error instead of over-committing.
#include "backends/redis/scripts.hpp"

namespace deadbolt::detail {
namespace {

// KEYS: permits, limit. ARGV: token, px, fence_px, permits.
constexpr std::string_view kAcquire = R"lua(
local found = kind_of(KEYS[1])
local limit = redis.call('GET', KEYS[2])
if found == 'semaphore' and not limit then found = 'zset' end  -- ours always has its limit
if found and found ~= 'semaphore' then return refuse(KEYS[1], found, 'a Semaphore') end
if limit and limit ~= ARGV[4] then
  return redis.error_reply('DEADBOLT-USAGE the semaphore has ' .. limit ..
    ' permits but this client asked for ' .. ARGV[4] .. ': every user of a name must agree')
end
local now = now_ms()
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, tonumber(first[2]) - now}
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
extend_to(KEYS[1], ARGV[2])
redis.call('SET', KEYS[2], ARGV[4], 'PX', redis.call('PTTL', KEYS[1]))
return {1, 0}
)lua";

}  // namespace

const Script& semaphore_acquire_script() {
    static const Script s = make_script("semaphore_acquire", with_helpers(kAcquire));
    return s;
}

}  // namespace deadbolt::detail
