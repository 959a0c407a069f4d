// Mutex scripts: the redis-py compatible string key holding the owner's token. Kept free of
// the shared helpers: they are the hot path, and every byte of Lua runs on each call. The
// waiters' line only defines functions, which run when someone waits.
#include "backends/redis/scripts.hpp"

namespace deadbolt::detail {
namespace {

// KEYS: lock, fence, line. ARGV: token, px, fence_px (or Redlock's fence_px@proposal, taken
// as next_fence takes it), box, member, ticket. Everything that can fail (a wrong-typed fence
// key, TIME refused) runs before the first write. An RWLock's readers mark the same key, so a
// Mutex waits for them. Only a refusal and a waiter's grant
// touch the line: a lock taken at once costs what it did before there was one.
constexpr std::string_view kAcquire = R"lua(
redis.replicate_commands()
local last = redis.call('GET', KEYS[2])
local t = redis.call('TIME')
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  local fence = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local n = last and tonumber(last)
  local fence_px, proposal = string.match(ARGV[3], '^(%d+)@(%d+)$')
  if proposal then
    proposal = tonumber(proposal)
    if n or proposal > fence then fence = proposal end
  end
  if n and n + 1 > fence then fence = n + 1 end
  fence = string.format('%d', fence)
  redis.call('SET', KEYS[2], fence, 'PX', fence_px or ARGV[3])
  leave_line(KEYS[3], ARGV[5], ARGV[6], ARGV[4])
  return {1, fence}
end
local found = kind_of(KEYS[1])
if not waits_for(found) then return refuse(KEYS[1], found, 'a Mutex') end
local pttl = redis.call('PTTL', KEYS[1])
return {0, pttl, line_up(KEYS[3], ARGV[5], ARGV[6], pttl)}
)lua";

// Redlock with fencing=0 promises no fence: the grant is one SET, as light as node-redlock's,
// and neither the counter nor the clock is read.
constexpr std::string_view kUnfencedAcquire = R"lua(
redis.replicate_commands()
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  leave_line(KEYS[3], ARGV[5], ARGV[6], ARGV[4])
  return {1, 0}
end
local found = kind_of(KEYS[1])
if not waits_for(found) then return refuse(KEYS[1], found, 'a Mutex') end
local pttl = redis.call('PTTL', KEYS[1])
return {0, pttl, line_up(KEYS[3], ARGV[5], ARGV[6], pttl)}
)lua";

// KEYS: lock, line. The next in line is woken (one waiter, not all of them) before the key
// goes, as the message went first before there was a line.
constexpr std::string_view kRelease = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then
  local woken = wake(KEYS[2], ARGV[2])
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
    static const Script s = make_script("acquire", with_kinds(with_line(kAcquire)));
    return s;
}
const Script& unfenced_acquire_script() {
    static const Script s =
        make_script("unfenced_acquire", with_kinds(with_line(kUnfencedAcquire)));
    return s;
}
const Script& release_script() {
    static const Script s = make_script("release", with_line(kRelease));
    return s;
}
const LeaseKind& mutex_kind() {
    static const Script extend = make_script("extend", std::string(kExtend));
    static const Script check = make_script("check", std::string(kCheck));
    static const LeaseKind k{&extend, &release_script(), &check, true};
    return k;
}

}  // namespace deadbolt::detail
