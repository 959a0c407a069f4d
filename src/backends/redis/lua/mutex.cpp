// Mutex scripts: the redis-py compatible string key holding the owner's token. Kept free of
// the shared helpers: they are the hot path, and every byte of Lua runs on each call.
#include "backends/redis/scripts.hpp"

namespace deadbolt::detail {
namespace {

// KEYS: lock, fence. Everything that can fail (a wrong-typed fence key, TIME refused) runs
// before the first write. An RWLock's readers mark the same key, so a Mutex waits for them.
constexpr std::string_view kAcquire = R"lua(
redis.replicate_commands()
local last = redis.call('GET', KEYS[2])
local t = redis.call('TIME')
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  local fence = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local n = last and tonumber(last)
  if n and n + 1 > fence then fence = n + 1 end
  fence = string.format('%d', fence)
  redis.call('SET', KEYS[2], fence, 'PX', ARGV[3])
  return {1, fence}
end
local found = kind_of(KEYS[1])
if not waits_for(found) then return refuse(KEYS[1], found, 'a Mutex') end
return {0, redis.call('PTTL', KEYS[1])}
)lua";

// Redlock with fencing=0 promises no fence: the grant is one SET, as light as node-redlock's,
// and neither the counter nor the clock is read.
constexpr std::string_view kUnfencedAcquire = R"lua(
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {1, 0} end
local found = kind_of(KEYS[1])
if not waits_for(found) then return refuse(KEYS[1], found, 'a Mutex') end
return {0, redis.call('PTTL', KEYS[1])}
)lua";

constexpr std::string_view kRelease = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then
  local woken = redis.call('PUBLISH', ARGV[2], 'released')
  redis.call('DEL', KEYS[1])
  return 1 + woken
end
return 0
)lua";

constexpr std::string_view kExtend = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return 0
)lua";

constexpr std::string_view kCheck = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then return 1 end
return 0
)lua";

}  // namespace

const Script& acquire_script() {
    static const Script s = make_script("acquire", with_kinds(kAcquire));
    return s;
}
const Script& unfenced_acquire_script() {
    static const Script s = make_script("unfenced_acquire", with_kinds(kUnfencedAcquire));
    return s;
}
const Script& release_script() {
    static const Script s = make_script("release", std::string(kRelease));
    return s;
}
const LeaseKind& mutex_kind() {
    static const Script extend = make_script("extend", std::string(kExtend));
    static const Script check = make_script("check", std::string(kCheck));
    static const LeaseKind k{&extend, &release_script(), &check, true};
    return k;
}

}  // namespace deadbolt::detail
