// Redlock's second round (DESIGN section 6): the agreed fence is written into the counter of
// every node where our holding still stands, so a later acquisition there reads a higher
// counter. One script for every fenced kind: how the holding is recognised differs, the
// counter rule does not.
#include "backends/redis/scripts.hpp"

namespace deadbolt::detail {
namespace {

// KEYS: lock1, fence1, lock2, fence2, ... (a MultiLock has one pair per name).
// ARGV: token, fence_px, held_as, notify channel (or ""), fence1, fence2, ...
// held_as: "token" (a string key holding the token), "owner" (a reentrant hash with the token
// as a field; its "" field carries the fence re-entries return) or "leader" (an election hash
// whose leader is the token; its term becomes the fence). All pairs must still be ours, or
// nothing is written. A counter that is not a number (written by someone else) is replaced.
constexpr std::string_view kRaiseFence = R"lua(
local how = ARGV[3]
local function ours(key)
  local t = redis.call('TYPE', key)['ok']
  if how == 'owner' then return t == 'hash' and redis.call('HEXISTS', key, ARGV[1]) == 1 end
  if how == 'leader' then return t == 'hash' and redis.call('HGET', key, 'leader') == ARGV[1] end
  return t == 'string' and redis.call('GET', key) == ARGV[1]
end
local n = #KEYS / 2
for i = 1, n do
  if not ours(KEYS[2 * i - 1]) then return 0 end
end
if ARGV[4] ~= '' then redis.call('PUBLISH', ARGV[4], 'elected') end
for i = 1, n do
  local fence = ARGV[4 + i]
  local last = tonumber(redis.call('GET', KEYS[2 * i]) or '0') or 0
  if last < tonumber(fence) then
    redis.call('SET', KEYS[2 * i], fence, 'PX', ARGV[2])
  else
    redis.call('PEXPIRE', KEYS[2 * i], ARGV[2])
  end
  if how == 'owner' then redis.call('HSET', KEYS[2 * i - 1], '', fence) end
  if how == 'leader' then redis.call('HSET', KEYS[2 * i - 1], 'term', fence) end
end
return 1
)lua";

}  // namespace

const Script& raise_fence_script() {
    static const Script s = make_script("raise_fence", std::string(kRaiseFence));
    return s;
}

}  // namespace deadbolt::detail
