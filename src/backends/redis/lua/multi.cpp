// MultiLock scripts: several plain Mutex keys taken together by one token, all or none. Each
// key is the same string key a Mutex of that name uses, so both exclude each other.
#include "backends/redis/scripts.hpp"

namespace deadbolt::detail {
namespace {

// KEYS: lock1, fence1, ..., lockN, fenceN, line1, ..., lineN (no lines when member and ticket
// are empty). ARGV: token, px, fence_px, box1, ..., boxN, member, ticket. Every key is looked
// at before anything is written, so a held or wrong-typed key leaves all of them untouched. A
// waiter lines up under each name that is held, so any of their releases wakes it.
constexpr std::string_view kAcquire = R"lua(
local n = #ARGV - 5
local member, ticket = ARGV[4 + n], ARGV[5 + n]
local last, held, wait = {}, {}, nil
for i = 1, n do
  local found = kind_of(KEYS[2 * i - 1])
  if waits_for(found) then
    wait = wait or redis.call('PTTL', KEYS[2 * i - 1])
    held[#held + 1] = i
  elseif found then
    return refuse(KEYS[2 * i - 1], found, 'a MultiLock')
  end
  last[i] = redis.call('GET', KEYS[2 * i])
end
if wait then
  for _, i in ipairs(held) do ticket = line_up(KEYS[2 * n + i], member, ticket, wait) or ticket end
  return {0, wait, member ~= '' and ticket or nil}
end
local out = {1}
for i = 1, n do
  redis.call('SET', KEYS[2 * i - 1], ARGV[1], 'PX', ARGV[2])
  out[i + 1] = next_fence(last[i], KEYS[2 * i], ARGV[3])
  leave_line(KEYS[2 * n + i], member, ticket, ARGV[3 + i])
end
return out
)lua";

// KEYS: lock1, line1, lock2, line2, ... ARGV: token, box, px, then each key's box. Deletes
// every lock still ours, waking the next in its line; 0 if any was not (the holding was partly
// lost), else 1 + waiters woken.
constexpr std::string_view kRelease = R"lua(
local all, woken, ours = true, 0, {}
for i = 1, #KEYS, 2 do
  if redis.call('GET', KEYS[i]) == ARGV[1] then
    ours[#ours + 1] = i
  else
    all = false
  end
end
for _, i in ipairs(ours) do woken = woken + wake(KEYS[i + 1], ARGV[3 + i]) end
for _, i in ipairs(ours) do redis.call('DEL', KEYS[i]) end
if all then return 1 + woken end
return 0
)lua";

// KEYS: every lock (no lines). All or nothing: a holding missing one key is lost, and
// extending the rest would only hide it.
constexpr std::string_view kExtend = R"lua(
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) ~= ARGV[1] then return 0 end
end
for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ARGV[3]) end
return 1
)lua";

constexpr std::string_view kCheck = R"lua(
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) ~= ARGV[1] then return 0 end
end
return 1
)lua";

}  // namespace

const Script& multi_acquire_script() {
    static const Script s = make_script("multi_acquire", with_helpers(kAcquire));
    return s;
}

const LeaseKind& multi_kind() {
    // Each key on its own after {token, box, px}: a holding spread over cluster slots is
    // renewed, checked and released one slot at a time (a lock and its line share a slot, so
    // they stay together, in order).
    static const Script extend = make_script("multi_extend", std::string(kExtend), 3);
    static const Script release = make_script("multi_release", with_line(kRelease), 3);
    static const Script check = make_script("multi_check", std::string(kCheck), 3);
    static const LeaseKind k{&extend, &release, &check, true};
    return k;
}

}  // namespace deadbolt::detail
