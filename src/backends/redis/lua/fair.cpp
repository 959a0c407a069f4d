// FairMutex scripts (DESIGN section 7): a FIFO list of waiters plus a zset of their keep-alive
// deadlines. A release hands the lock straight to the next live waiter and wakes only it.
#include "backends/redis/scripts.hpp"

namespace deadbolt::detail {
namespace {

// Shared by acquire and release. KEYS: lock, fence, queue, alive.
constexpr std::string_view kQueue = R"lua(
local function drop_dead(now)
  for _, w in ipairs(redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now)) do
    redis.call('LREM', KEYS[3], 0, w)
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
end
-- The grantee must confirm within waiter_ttl (its acquire sees the lock holding its token
-- and extends it), so a waiter that died right after its grant blocks nobody for long.
local function grant(waiter, last, px, waiter_ttl, fence_px, prefix)
  redis.call('PUBLISH', prefix .. waiter, 'granted')
  redis.call('ZREM', KEYS[4], waiter)
  redis.call('SET', KEYS[1], waiter, 'PX', math.min(tonumber(px), tonumber(waiter_ttl)))
  next_fence(last, KEYS[2], fence_px)
end
)lua";

// ARGV: token, px, fence_px, waiter_ttl, grant channel prefix.
constexpr std::string_view kAcquire = R"lua(
local found = kind_of(KEYS[1])
if found and not waits_for(found) then return refuse(KEYS[1], found, 'a FairMutex') end
local last = redis.call('GET', KEYS[2])
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  extend_to(KEYS[1], ARGV[2])
  return {1, last or next_fence(nil, KEYS[2], ARGV[3])}
end
local now = now_ms()
drop_dead(now)
if not holder then
  local head = redis.call('LINDEX', KEYS[3], 0)
  if not head or head == ARGV[1] then
    if head then
      redis.call('LPOP', KEYS[3])
      redis.call('ZREM', KEYS[4], ARGV[1])
    end
    redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
    return {1, next_fence(last, KEYS[2], ARGV[3])}
  end
  -- The holder vanished without a release: the head of the queue is next.
  redis.call('LPOP', KEYS[3])
  grant(head, last, ARGV[2], ARGV[4], ARGV[3], ARGV[5])
end
if not redis.call('ZSCORE', KEYS[4], ARGV[1]) then redis.call('RPUSH', KEYS[3], ARGV[1]) end
redis.call('ZADD', KEYS[4], now + tonumber(ARGV[4]), ARGV[1])
redis.call('PEXPIRE', KEYS[3], ARGV[4])
redis.call('PEXPIRE', KEYS[4], ARGV[4])
return {0, redis.call('PTTL', KEYS[1])}
)lua";

// KEYS: lock, fence, queue, alive, line. ARGV: token, box, px, waiter_ttl, fence_px, grant
// channel prefix. A caller that does not hold the lock is a waiter giving up: it leaves the
// queue. With no FairMutex waiter queued, the next in the name's line (another kind's waiter:
// a Mutex, a MultiLock) is woken.
constexpr std::string_view kRelease = R"lua(
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  redis.call('LREM', KEYS[3], 0, ARGV[1])
  redis.call('ZREM', KEYS[4], ARGV[1])
  return 0
end
local last = redis.call('GET', KEYS[2])
drop_dead(now_ms())
local head = redis.call('LPOP', KEYS[3])
if head then
  grant(head, last, ARGV[3], ARGV[4], ARGV[5], ARGV[6])
  return 1
end
local woken = wake(KEYS[5], ARGV[2])
redis.call('DEL', KEYS[1])
return 1 + woken
)lua";

std::string source(std::string_view body) {
    std::string s = with_helpers(kQueue);
    s += body;
    return s;
}

}  // namespace

const Script& fair_acquire_script() {
    static const Script s = make_script("fair_acquire", source(kAcquire));
    return s;
}
const LeaseKind& fair_kind() {
    static const Script release = make_script("fair_release", source(kRelease));
    static const LeaseKind k{mutex_kind().extend, &release, mutex_kind().check, false};
    return k;
}

}  // namespace deadbolt::detail
