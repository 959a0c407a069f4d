// Semaphore scripts: permits are holders in a zset (see holders.cpp); the limit is stored
// beside them so clients that disagree on it get an error instead of over-committing.
#include "backends/redis/scripts.hpp"

namespace deadbolt::detail {
namespace {

// KEYS: permits, limit, line. ARGV: token, px, fence_px, permits, box, member, ticket. A
// waiter granted a permit while more are free wakes the next in line too: permits freed
// together (a force-unlock, holders that expired) are taken by as many waiters.
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
  local wait = tonumber(first[2]) - now
  return {0, wait, line_up(KEYS[3], ARGV[6], ARGV[7], wait)}
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
extend_to(KEYS[1], ARGV[2])
redis.call('SET', KEYS[2], ARGV[4], 'PX', redis.call('PTTL', KEYS[1]))
if ARGV[7] ~= '' and redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[4]) then
  redis.call('ZREM', KEYS[3], ARGV[6])
  wake(KEYS[3], ARGV[5])
else
  leave_line(KEYS[3], ARGV[6], ARGV[7], ARGV[5])
end
return {1, 0}
)lua";

}  // namespace

const Script& semaphore_acquire_script() {
    static const Script s = make_script("semaphore_acquire", with_helpers(kAcquire));
    return s;
}

}  // namespace deadbolt::detail
