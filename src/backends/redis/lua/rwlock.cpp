// RWLock scripts. KEYS: lock (the writer's token, a plain mutex key), fence, readers (zset of
// token -> expiry), claim (a waiting writer's token), line (both sides wait in it). Policy: a
// waiting writer's claim stops new readers, so a stream of readers cannot starve writers; readers
// already in finish.
#include "backends/redis/scripts.hpp"

namespace deadbolt::detail {
namespace {

// KEYS[5] is the name's line. Readers go in together: a reader that waited in line and got
// in wakes the next in line too when that one reads as well. A writer waiting (its claim)
// holds back every new reader, those in line too: a reader woken while one waits passes the
// wake-up on to the first writer in line, or the lock would sit free while both sleep.
constexpr std::string_view kReaders = R"lua(
local function reads(m) return string.find(m, '^[rR]') ~= nil end
local function pass_to_writer(w, box)
  for _, m in ipairs(redis.call('ZRANGE', w, 0, 31)) do
    if not reads(m) then
      redis.call('ZREM', w, m)
      if told(m, 'go', box) then return end
    end
  end
end
)lua";

// Readers mark the name's own key (readers_mark, expiring with the last of them), so every
// other kind finds it taken: exclusive ones wait, the rest are refused. ARGV: token, px,
// fence_px, box, member, ticket.
constexpr std::string_view kRead = R"lua(
local box, member, ticket = ARGV[4], ARGV[5], ARGV[6]
local found = kind_of(KEYS[1])
if found == 'lock' then
  local pttl = redis.call('PTTL', KEYS[1])
  return {0, pttl, line_up(KEYS[5], member, ticket, pttl)}
end
if found and found ~= 'readers' then return refuse(KEYS[1], found, 'an RWLock reader') end
local claim = redis.call('PTTL', KEYS[4])
if claim ~= -2 then
  local woken = member ~= '' and ticket ~= '' and not redis.call('ZSCORE', KEYS[5], member)
  local lined = line_up(KEYS[5], member, ticket, claim)
  if woken then pass_to_writer(KEYS[5], box) end
  return {0, claim, lined}
end
local now = now_ms()
-- Before the first write too: a refused PEXPIRE must not leave a reader with no expiry.
extend_to(KEYS[3], ARGV[2])
redis.call('SET', KEYS[1], readers_mark, 'NX', 'PX', ARGV[2])
extend_to(KEYS[1], ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
redis.call('ZADD', KEYS[3], now + tonumber(ARGV[2]), ARGV[1])
extend_to(KEYS[3], ARGV[2])
if ticket ~= '' then
  redis.call('ZREM', KEYS[5], member)
  local next = redis.call('ZRANGE', KEYS[5], 0, 0)[1]
  if next and reads(next) then
    wake(KEYS[5], box)
  elseif next then
    told(next, 'taken', box)
  end
end
return {1, 0}
)lua";

// ARGV after the common three: waiter_ttl (how long the claim outlives its last refresh), box,
// member, ticket.
constexpr std::string_view kWrite = R"lua(
local box, member, ticket = ARGV[5], ARGV[6], ARGV[7]
local last = redis.call('GET', KEYS[2])
local function claim()
  local c = redis.call('GET', KEYS[4])
  if not c or c == ARGV[1] then redis.call('SET', KEYS[4], ARGV[1], 'PX', ARGV[4]) end
end
local found = kind_of(KEYS[1])
if found and not waits_for(found) then return refuse(KEYS[1], found, 'an RWLock writer') end
if found then
  claim()
  local pttl = redis.call('PTTL', KEYS[1])
  return {0, pttl, line_up(KEYS[5], member, ticket, pttl)}
end
local now = now_ms()
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
local first = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
if first[1] then
  claim()
  local wait = tonumber(first[2]) - now
  return {0, wait, line_up(KEYS[5], member, ticket, wait)}
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if redis.call('GET', KEYS[4]) == ARGV[1] then redis.call('DEL', KEYS[4]) end
leave_line(KEYS[5], member, ticket, box)
return {1, next_fence(last, KEYS[2], ARGV[3])}
)lua";

// Op convention. KEYS: claim, lock, line. ARGV: token, box, px, member. Readers held back by
// the claim may go now: the next in line is woken. A writer that had been woken already (its
// place is gone) passes the wake-up on too, so it is not lost.
constexpr std::string_view kAbandon = R"lua(
local woken_before = ARGV[4] ~= '' and redis.call('ZREM', KEYS[3], ARGV[4]) == 0
if redis.call('GET', KEYS[1]) == ARGV[1] then
  local woken = wake(KEYS[3], ARGV[2])
  redis.call('DEL', KEYS[1])
  return 1 + woken
end
if woken_before and redis.call('EXISTS', KEYS[2]) == 0 then wake(KEYS[3], ARGV[2]) end
return 0
)lua";

}  // namespace

const Script& read_acquire_script() {
    static const Script s =
        make_script("read_acquire", with_helpers(std::string(kReaders) + std::string(kRead)));
    return s;
}
const Script& write_acquire_script() {
    static const Script s = make_script("write_acquire", with_helpers(kWrite));
    return s;
}
const Script& write_abandon_script() {
    static const Script s = make_script("write_abandon", with_line(kAbandon));
    return s;
}

}  // namespace deadbolt::detail
