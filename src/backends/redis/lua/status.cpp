// The status script: what `deadbolt status` shows, for every kind of lock, in one round trip.
// ARGV: how many holders to list at most.
#include "backends/redis/scripts.hpp"

namespace deadbolt::detail {
namespace {

constexpr std::string_view kStatus = R"lua(
local now = now_ms()
local found = kind_of(KEYS[1])
local kind, holders, permits, value = 'free', 0, 0, false
local pttl = redis.call('PTTL', KEYS[1])
-- Who holds it: token, the grant's fence ('' when none) and remaining ms, for each holder.
local who = {}
local function holder(token, fence, ms)
  who[#who + 1] = token
  who[#who + 1] = fence or ''
  who[#who + 1] = ms
end
local function members(key)  -- a zset's live holders, soonest to expire first
  local m = redis.call('ZRANGEBYSCORE', key, '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0,
                       ARGV[1])
  for i = 1, #m, 2 do holder(m[i], '', math.floor(tonumber(m[i + 1]) - now)) end
end
if found == 'lock' then
  kind, holders = 'mutex', 1
  holder(redis.call('GET', KEYS[1]), redis.call('GET', KEYS[2]), pttl)
elseif found == 'leader' then
  kind, holders = 'leader', 1
  local h = redis.call('HMGET', KEYS[1], 'leader', 'term', 'value')
  holder(h[1], h[2], pttl)
  value = h[3]
elseif found == 'reentrant' then
  kind, holders = 'reentrant', redis.call('HLEN', KEYS[1]) - 1
  local h = redis.call('HGETALL', KEYS[1])
  local fence = redis.call('HGET', KEYS[1], '')
  for i = 1, #h, 2 do
    if h[i] ~= '' and #who < 3 * tonumber(ARGV[1]) then holder(h[i], fence, pttl) end
  end
elseif found == 'semaphore' and redis.call('EXISTS', KEYS[6]) == 1 then
  kind = 'semaphore'
  holders = redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')
  permits = tonumber(redis.call('GET', KEYS[6]) or '0')
  members(KEYS[1])
elseif found == 'latch' then
  kind, holders = 'latch', tonumber(redis.call('GET', KEYS[1]))
elseif found == 'rate' then
  kind = 'rate_limiter'
elseif found == 'readers' then
  kind = 'readers'
elseif found then
  return refuse(KEYS[1], found == 'semaphore' and 'zset' or found, 'a lock')
end
if kind == 'free' or kind == 'readers' then
  local readers = redis.call('ZCOUNT', KEYS[4], '(' .. now, '+inf')
  if readers > 0 or kind == 'readers' then
    kind, holders, pttl = 'readers', readers, redis.call('PTTL', KEYS[4])
    members(KEYS[4])
  end
end
local waiters = redis.call('LLEN', KEYS[3]) + redis.call('ZCARD', KEYS[7])
return {kind, pttl, redis.call('GET', KEYS[2]), holders, waiters, permits,
        redis.call('EXISTS', KEYS[5]), who, value}
)lua";

// KEYS: main, fence, queue, readers, claim, limit, line (as status). ARGV: box, observe
// channel, notices channel, name. Frees the name whatever holds it (Redisson's forceUnlock):
// the next in line is woken, and the name goes out on the notices channel, where every client
// that holds something listens: a holder checks its holdings of the name at once and reports
// the loss (one that does not listen finds its key gone at its next renewal). The fence
// counter stays, so every later grant's fence is higher than the evicted holder's.
// A string with no expiry is freed only when it reads as a lock's token (deadbolt's, redis-py's
// uuid hex, node-redlock's hex, redsync's base64: 16 to 128 token characters, digits and
// letters both);
// anything else is a user's data, which force-unlock must not delete.
constexpr std::string_view kForceUnlock = R"lua(
local found = kind_of(KEYS[1])
if not found then
  if redis.call('EXISTS', KEYS[4]) == 0 then return 'free' end
  found = 'readers'  -- readers whose mark expired before their set
end
if found == 'latch' or found == 'rate' then
  return refuse(KEYS[1], found, 'force-unlock (locks only)')
end
if found == 'lock' and redis.call('PTTL', KEYS[1]) < 0 then
  local v = redis.call('GET', KEYS[1])
  if #v < 16 or #v > 128 or not string.match(v, '^[%w:._+/=-]+$') or
     not string.match(v, '%d') or not string.match(v, '%a') then
    return redis.error_reply('DEADBOLT-KIND key ' .. KEYS[1] .. ' holds a string with no ' ..
      'expiry that is no lock token (data, not a lock); force-unlock leaves it: delete it ' ..
      'yourself if it is a stale lock')
  end
end
if found ~= 'lock' and found ~= 'readers' and found ~= 'reentrant' and found ~= 'leader' and
   not (found == 'semaphore' and redis.call('EXISTS', KEYS[6]) == 1) then
  return refuse(KEYS[1], found == 'semaphore' and 'zset' or found, 'force-unlock')
end
redis.call('PUBLISH', ARGV[3], ARGV[4])
redis.call('PUBLISH', ARGV[2], 'resigned')
redis.call('DEL', KEYS[1])
if found == 'readers' then redis.call('DEL', KEYS[4]) end
wake(KEYS[7], ARGV[1])
return found
)lua";

}  // namespace

const Script& force_unlock_script() {
    static const Script s = make_script("force_unlock", with_helpers(kForceUnlock));
    return s;
}

const Script& status_script() {
    static const Script s = make_script("status", with_helpers(kStatus));
    return s;
}

}  // namespace deadbolt::detail
