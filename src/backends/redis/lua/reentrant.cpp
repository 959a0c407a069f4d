// ReentrantMutex scripts: a hash {owner: hold count, "": fence} (Redisson's layout plus the
// fence), so every handle of one owner, in any process, agrees on the count.
#include "backends/redis/scripts.hpp"

namespace deadbolt::detail {
namespace {

// The fence is issued on the first acquisition only; re-entries return it unchanged, as
// {2, fence} so that Redlock does not mistake a re-entry for a new holding to fence. ARGV[4]
// "fresh": the caller holds nothing under this owner, so a holding of the owner found here is
// a leftover (a lost reply, a rollback) and is replaced by a new one with a new fence.
// KEYS: lock, fence, line. ARGV[5..7]: box, member, ticket.
constexpr std::string_view kAcquire = R"lua(
local last = redis.call('GET', KEYS[2])
local leftover = ARGV[4] == 'fresh' and redis.call('TYPE', KEYS[1])['ok'] == 'hash' and
                 redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1
if redis.call('EXISTS', KEYS[1]) == 0 or leftover then
  local fence = next_fence(last, KEYS[2], ARGV[3])
  redis.call('HSET', KEYS[1], ARGV[1], 1, '', fence)
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  leave_line(KEYS[3], ARGV[6], ARGV[7], ARGV[5])
  return {1, fence}
end
local found = kind_of(KEYS[1])
if found ~= 'reentrant' then return refuse(KEYS[1], found, 'a ReentrantMutex') end
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
  extend_to(KEYS[1], ARGV[2])
  return {2, redis.call('HGET', KEYS[1], '')}
end
local pttl = redis.call('PTTL', KEYS[1])
return {0, pttl, line_up(KEYS[3], ARGV[6], ARGV[7], pttl)}
)lua";

// KEYS: lock, line. The last hold's release wakes the next in line.
constexpr std::string_view kRelease = R"lua(
local n = redis.call('HGET', KEYS[1], ARGV[1])
if not n then return 0 end
if tonumber(n) > 1 then
  redis.call('HINCRBY', KEYS[1], ARGV[1], -1)
  return 1
end
local woken = wake(KEYS[2], ARGV[2])
redis.call('DEL', KEYS[1])
return 1 + woken
)lua";

// A failed Redlock attempt's give-back, which may run late (a node that did not answer gets it
// in the background): it releases only a holding whose fence is at most the last ARGV, the
// highest the attempt could have left there. The owner's next grant on that node (a leftover
// replaced, or the key made anew) draws a higher fence from the node's counter, so the late
// give-back cannot take it back, where the plain release would delete it.
constexpr std::string_view kBelowBound = R"lua(
if redis.call('TYPE', KEYS[1])['ok'] ~= 'hash' then return 0 end
local f = tonumber(redis.call('HGET', KEYS[1], '') or '')
if not f or f > tonumber(ARGV[#ARGV]) then return 0 end
)lua";

constexpr std::string_view kExtend = R"lua(
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
extend_to(KEYS[1], ARGV[3])
return 1
)lua";

constexpr std::string_view kCheck = R"lua(
return redis.call('HEXISTS', KEYS[1], ARGV[1])
)lua";

}  // namespace

const Script& reentrant_acquire_script() {
    static const Script s = make_script("reentrant_acquire", with_helpers(kAcquire));
    return s;
}
const LeaseKind& reentrant_kind() {
    static const Script release = make_script("reentrant_release", with_line(kRelease));
    static const Script extend = make_script("reentrant_extend", with_helpers(kExtend));
    static const Script check = make_script("reentrant_check", std::string(kCheck));
    static const Script give_back = make_script(
        "reentrant_give_back", with_line(std::string(kBelowBound) + std::string(kRelease)));
    static const LeaseKind k{&extend, &release, &check, true, "owner", &give_back};
    return k;
}

}  // namespace deadbolt::detail
