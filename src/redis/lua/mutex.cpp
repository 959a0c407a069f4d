// Mutex scripts: the redis-py compatible string key holding the owner's token. Kept free of
// the shared helpers: they are the hot path, and every byte of Lua runs on each call.
#include "redis/scripts.hpp"

namespace deadbolt::detail {
namespace {

// The fence key is read before anything is written so a wrong-typed key fails cleanly.
constexpr std::string_view kAcquire = R"lua(
redis.replicate_commands()
local last = redis.call('GET', KEYS[2])
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  local t = redis.call('TIME')
  local fence = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local n = last and tonumber(last)
  if n and n + 1 > fence then fence = n + 1 end
  fence = string.format('%d', fence)
  redis.call('SET', KEYS[2], fence, 'PX', ARGV[3])
  return {1, fence}
end
if redis.call('TYPE', KEYS[1])['ok'] ~= 'string' then
  return redis.error_reply('WRONGTYPE the lock key holds a value that is not a lock token')
end
return {0, redis.call('PTTL', KEYS[1])}
)lua";

constexpr std::string_view kRelease = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1 + redis.call('PUBLISH', ARGV[2], 'released')
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
    static const Script s = make_script("acquire", std::string(kAcquire));
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
