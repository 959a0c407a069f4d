// Mutex scripts: the redis-py compatible string key holding the owner's token. Kept free of
// the shared helpers where they can be: they are the hot path, and every byte of Lua runs on
// each call, the definitions of the helpers too. The usual grant and release return before
// the waiters' line and the kinds are defined; only someone who waits pays for them.
#include "backends/redis/scripts.hpp"

namespace deadbolt::detail {
namespace {

// KEYS: lock, fence, line. ARGV: token, px, fence_px (or Redlock's fence_px@proposal), box,
// member, ticket. The fence is max(counter + 1, start): one server starts at its clock, read
// before the first write; Redlock at its proposal, the clock read only where the counter is
// lost. The counter is written and read in one SET ... GET: a lock taken at once costs two
// calls. The clock's seconds and microseconds are joined as text, for a fraction of what
// string.format costs. A wrong-typed fence key undoes the grant, so nothing is left behind. A
// grant that never lined up returns before the helpers after it are defined (their closures
// were a tenth of the script's time). An RWLock's readers mark the same key, so a Mutex waits
// for them.
constexpr std::string_view kAcquire = R"lua(
local fence_px, proposal = string.match(ARGV[3], '^(%d+)@(%d+)$')
local t = not proposal and redis.call('TIME')
local fence = redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) and
  (proposal or t[1] .. string.sub('00000' .. t[2], -6))
if fence then
  fence_px = fence_px or ARGV[3]
  local last = redis.pcall('SET', KEYS[2], fence, 'PX', fence_px, 'GET')
  if type(last) == 'table' then
    redis.call('DEL', KEYS[1])
    return last
  end
  local n = last and tonumber(last)
  local floor = n and n + 1
  if not n and proposal then
    t = redis.pcall('TIME')
    if t.err then
      redis.call('DEL', KEYS[1], KEYS[2])
      return t
    end
    floor = tonumber(t[1]) * 1000000 + tonumber(t[2])
  end
  if floor and floor > tonumber(fence) then
    fence = string.format('%d', floor)
    redis.call('SET', KEYS[2], fence, 'PX', fence_px)
  end
  if ARGV[6] == '' then return {1, fence} end
end
)lua";

// After the helpers: a waiter's grant leaves the line; a refusal lines up.
constexpr std::string_view kLineUp = R"lua(
if fence then
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
local fence = redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) and 0
if fence and ARGV[6] == '' then return {1, 0} end
)lua";

// KEYS: lock, line. The next in line is woken (one waiter, not all of them) before the key
// goes, as the message went first before there was a line. With no line, nobody is woken, and
// the release returns before the line's helpers are defined (wake() checks that a key there
// is a line).
constexpr std::string_view kRelease = R"lua(
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('DEL', KEYS[1])
  return 1
end
)lua";

constexpr std::string_view kWake = R"lua(
local woken = wake(KEYS[2], ARGV[2])
redis.call('DEL', KEYS[1])
return 1 + woken
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
    static const Script s =
        make_script("acquire", std::string(kAcquire) + with_kinds(with_line(kLineUp)));
    return s;
}
const Script& unfenced_acquire_script() {
    static const Script s = make_script(
        "unfenced_acquire", std::string(kUnfencedAcquire) + with_kinds(with_line(kLineUp)));
    return s;
}
const Script& release_script() {
    static const Script s = make_script("release", std::string(kRelease) + with_line(kWake));
    return s;
}
const LeaseKind& mutex_kind() {
    static const Script extend = make_script("extend", std::string(kExtend));
    static const Script check = make_script("check", std::string(kCheck));
    static const LeaseKind k{&extend, &release_script(), &check, true};
    return k;
}

}  // namespace deadbolt::detail
