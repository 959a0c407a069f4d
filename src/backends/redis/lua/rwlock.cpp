// RWLock scripts. KEYS: lock (the writer's token, a plain mutex key), fence, readers (zset of
// token -> expiry), claim (a waiting writer's token). Policy: a waiting writer's claim stops
// new readers, so a stream of readers cannot starve writers; readers already in finish.
#include "backends/redis/scripts.hpp"

namespace deadbolt::detail {
namespace {

// Readers mark the name's own key (readers_mark, expiring with the last of them), so every
// other kind finds it taken: exclusive ones wait, the rest are refused.
constexpr std::string_view kRead = R"lua(
local found = kind_of(KEYS[1])
if found == 'lock' then return {0, redis.call('PTTL', KEYS[1])} end
if found and found ~= 'readers' then return refuse(KEYS[1], found, 'an RWLock reader') end
local claim = redis.call('PTTL', KEYS[4])
if claim ~= -2 then return {0, claim} end
local now = now_ms()
-- Before the first write too: a refused PEXPIRE must not leave a reader with no expiry.
extend_to(KEYS[3], ARGV[2])
redis.call('SET', KEYS[1], readers_mark, 'NX', 'PX', ARGV[2])
extend_to(KEYS[1], ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
redis.call('ZADD', KEYS[3], now + tonumber(ARGV[2]), ARGV[1])
extend_to(KEYS[3], ARGV[2])
return {1, 0}
)lua";

// ARGV after the common three: waiter_ttl (how long the claim outlives its last refresh).
constexpr std::string_view kWrite = R"lua(
local last = redis.call('GET', KEYS[2])
local function claim()
  local c = redis.call('GET', KEYS[4])
  if not c or c == ARGV[1] then redis.call('SET', KEYS[4], ARGV[1], 'PX', ARGV[4]) end
end
local found = kind_of(KEYS[1])
if found and not waits_for(found) then return refuse(KEYS[1], found, 'an RWLock writer') end
if found then
  claim()
  return {0, redis.call('PTTL', KEYS[1])}
end
local now = now_ms()
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
local first = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
if first[1] then
  claim()
  return {0, tonumber(first[2]) - now}
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if redis.call('GET', KEYS[4]) == ARGV[1] then redis.call('DEL', KEYS[4]) end
return {1, next_fence(last, KEYS[2], ARGV[3])}
)lua";

// Op convention, KEYS: claim. Readers held back by the claim may go now.
constexpr std::string_view kAbandon = R"lua(
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local woken = redis.call('PUBLISH', ARGV[2], 'released')
redis.call('DEL', KEYS[1])
return 1 + woken
)lua";

}  // namespace

const Script& read_acquire_script() {
    static const Script s = make_script("read_acquire", with_helpers(kRead));
    return s;
}
const Script& write_acquire_script() {
    static const Script s = make_script("write_acquire", with_helpers(kWrite));
    return s;
}
const Script& write_abandon_script() {
    static const Script s = make_script("write_abandon", std::string(kAbandon));
    return s;
}

}  // namespace deadbolt::detail
