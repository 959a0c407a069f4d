// Holders kept in a zset of token -> expiry in server ms: RWLock readers and semaphore permits.
// A holder whose score has passed is gone, whether or not it was pruned yet.
#include "backends/redis/scripts.hpp"

namespace deadbolt::detail {
namespace {

// KEYS: zset, line, companions. ARGV: token, box, px, "each" | "last". A release wakes the
// next in line: in "each" mode (permits) every release, in "last" mode (readers) only the last
// holder's, which also deletes the companions (the readers' mark on the name).
constexpr std::string_view kRelease = R"lua(
local now = now_ms()
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not s or tonumber(s) <= now then return 0 end
local last = redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf') == 1
local woken = 0
if ARGV[4] == 'each' or last then woken = wake(KEYS[2], ARGV[2]) end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if ARGV[4] == 'last' and last then
  for i = 3, #KEYS do
    if redis.call('GET', KEYS[i]) == readers_mark then redis.call('DEL', KEYS[i]) end
  end
end
return 1 + woken
)lua";

// KEYS: zset, companions (no line: it keeps its own expiry, which its waiters set).
constexpr std::string_view kExtend = R"lua(
local now = now_ms()
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not s or tonumber(s) <= now then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
extend_to(KEYS[1], ARGV[3])
for i = 2, #KEYS do extend_to(KEYS[i], ARGV[3]) end
return 1
)lua";

constexpr std::string_view kCheck = R"lua(
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if s and tonumber(s) > now_ms() then return 1 end
return 0
)lua";

constexpr std::string_view kLive = R"lua(
return redis.call('ZCOUNT', KEYS[1], '(' .. now_ms(), '+inf')
)lua";

}  // namespace

const Script& zset_live_count_script() {
    static const Script s = make_script("holder_live_count", with_helpers(kLive));
    return s;
}

const LeaseKind& zset_holder_kind() {
    static const Script release = make_script("holder_release", with_helpers(kRelease));
    static const Script extend = make_script("holder_extend", with_helpers(kExtend));
    static const Script check = make_script("holder_check", with_helpers(kCheck));
    static const LeaseKind k{&extend, &release, &check, false};
    return k;
}

}  // namespace deadbolt::detail
