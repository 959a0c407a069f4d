#include "redis/scripts.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>

#include "net/resp.hpp"

namespace deadbolt::detail {
namespace {

// The fence is max(counter + 1, server time in µs): it keeps increasing after the counter
// expired or was lost in a restart, as long as the server clock does not step back. The fence
// key is read before anything is written so a wrong-typed key fails the script cleanly.
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
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
)lua";

// The record inherits the data key's TTL so it lives exactly as long as what it guards.
constexpr std::string_view kFencedSet = R"lua(
local high = redis.call('GET', KEYS[2])
if high and tonumber(high) > tonumber(ARGV[1]) then return {0, high} end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then
  redis.call('SET', KEYS[2], ARGV[1], 'PX', ttl)
else
  redis.call('SET', KEYS[2], ARGV[1])
end
return {1, ARGV[1]}
)lua";

constexpr std::string_view kThrottle = R"lua(
if redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) then return -2 end
return redis.call('PTTL', KEYS[1])
)lua";

Script make(std::string_view name, std::string_view src) {
    return {name, src, sha1_hex(src)};
}

void encode_script(std::string& out, std::string_view verb, std::string_view body,
                   const std::vector<std::string_view>& keys,
                   const std::vector<std::string_view>& args) {
    std::string nkeys = std::to_string(keys.size());
    std::vector<std::string_view> argv;
    argv.reserve(3 + keys.size() + args.size());
    argv.push_back(verb);
    argv.push_back(body);
    argv.push_back(nkeys);
    argv.insert(argv.end(), keys.begin(), keys.end());
    argv.insert(argv.end(), args.begin(), args.end());
    encode_command(out, argv);
}

}  // namespace

std::string sha1_hex(std::string_view data) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_Digest(data.data(), data.size(), md, &len, EVP_sha1(), nullptr);
    std::string hex;
    for (unsigned i = 0; i < len; ++i) hex += fmt::format("{:02x}", md[i]);
    return hex;
}

const Script& acquire_script() {
    static const Script s = make("acquire", kAcquire);
    return s;
}
const Script& release_script() {
    static const Script s = make("release", kRelease);
    return s;
}
const Script& extend_script() {
    static const Script s = make("extend", kExtend);
    return s;
}
const Script& fenced_set_script() {
    static const Script s = make("fenced_set", kFencedSet);
    return s;
}
const Script& throttle_script() {
    static const Script s = make("throttle", kThrottle);
    return s;
}

void encode_evalsha(std::string& out, const Script& s, const std::vector<std::string_view>& keys,
                    const std::vector<std::string_view>& args) {
    encode_script(out, "EVALSHA", s.sha1, keys, args);
}

void encode_eval(std::string& out, const Script& s, const std::vector<std::string_view>& keys,
                 const std::vector<std::string_view>& args) {
    encode_script(out, "EVAL", s.source, keys, args);
}

}  // namespace deadbolt::detail
