// The waiters' line (DESIGN section 7): the Lua that every kind shares to wake one waiter per
// release instead of all of them. Waiters line up in a zset beside the lock; a release pops
// the first whose client still listens, tells it through its client's inbox, and has the next
// one stand by in case the woken one never comes.
#include "backends/redis/scripts.hpp"

namespace deadbolt::detail {
namespace {

constexpr std::string_view kLine = R"lua(
-- A waiter refused while it listens is a member of the name's line, scored by its ticket (the
-- server's time in us when it first lined up) and named role .. #inbox .. ':' .. inbox ..
-- token: role 'r' a reader, 'x' any other kind; upper case for a cluster client, whose inbox a
-- PUBLISH here does not count (only this node's subscribers are), so it is taken as listening.
local function inbox_of(m)
  local n = string.match(m, '^%a(%d+):')
  if not n then return nil end
  return string.sub(m, #n + 3, #n + 2 + tonumber(n))
end
-- Tells m's client word about box; false when nobody listens there (its client is gone).
local function told(m, word, box)
  local inbox = inbox_of(m)
  if not inbox then return false end
  return redis.call('PUBLISH', inbox, word .. ' ' .. box) > 0 or string.find(m, '^%u') ~= nil
end
-- Wakes the first waiter in line w whose client listens (dropping those whose client does not)
-- and has the next one stand by, in case the woken one never comes: 1 if it woke one. Each is
-- told before it leaves the line, so a PUBLISH the ACL refuses fails the script before it
-- wrote anything.
local function wake(w, box)
  -- No line here: a release sent without it (its slot migrates, and the line was not there).
  if redis.call('TYPE', w)['ok'] ~= 'zset' then return 0 end
  repeat
    local head = redis.call('ZRANGE', w, 0, 0)[1]
    if not head then return 0 end
    local listens = told(head, 'go', box)
    redis.call('ZREM', w, head)
  until listens
  repeat
    local next = redis.call('ZRANGE', w, 0, 0)[1]
    if not next or told(next, 'next', box) then return 1 end
    redis.call('ZREM', w, next)
  until false
end
-- A refused waiter that listens (member not empty) lines up in w, or keeps its place (NX),
-- with its ticket (empty: now). The line outlives the wait it was told (pttl, -1 = none) by
-- 30 s, so a waiter is still in it when it looks again. The ticket, or nil: not lined up.
local function line_up(w, member, ticket, pttl)
  if member == '' then return nil end
  if ticket == '' then
    local t = redis.call('TIME')
    ticket = string.format('%d', tonumber(t[1]) * 1000000 + tonumber(t[2]))
  end
  redis.call('ZADD', w, 'NX', ticket, member)
  local keep = math.max(tonumber(pttl), 0) + 30000
  if redis.call('PTTL', w) < keep then redis.call('PEXPIRE', w, keep) end
  return ticket
end
-- A waiter that had lined up (it has a ticket) and got the lock leaves the line, and the next
-- one stops standing by.
local function leave_line(w, member, ticket, box)
  if ticket == '' then return end
  redis.call('ZREM', w, member)
  local next = redis.call('ZRANGE', w, 0, 0)[1]
  if next then told(next, 'taken', box) end
end
)lua";

// Op convention. KEYS: lock1, line1, lock2, line2, ... ARGV: token, box, px, member, then each
// key's box. A waiter that gives up leaves every line; where it had been woken already (its
// place is gone) and the lock is free, it wakes the next one, so the wake-up is not lost.
constexpr std::string_view kLeave = R"lua(
if ARGV[4] == '' then return 1 end
for i = 1, #KEYS, 2 do
  if redis.call('ZREM', KEYS[i + 1], ARGV[4]) == 0 and redis.call('EXISTS', KEYS[i]) == 0 then
    wake(KEYS[i + 1], ARGV[4 + i])
  end
end
return 1
)lua";

}  // namespace

std::string_view line_lua() {
    return kLine;
}

std::string with_line(std::string_view body) {
    std::string s(kLine);
    s += body;
    return s;
}

const Script& leave_line_script() {
    static const Script s = make_script("leave_line", with_line(kLeave), 4);
    return s;
}

}  // namespace deadbolt::detail
