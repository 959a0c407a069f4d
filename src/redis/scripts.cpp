#include "redis/scripts.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>

#include "net/resp.hpp"

namespace deadbolt::detail {
namespace {

// TIME makes a script non-deterministic: Redis 7 replicates effects anyway; older servers
// need replicate_commands() before the first write.
constexpr std::string_view kHelpers = R"lua(
redis.replicate_commands()
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- max(last + 1, server time in us): increasing even after the counter expired or was lost
-- in a restart, as long as the server clock does not step back (DESIGN section 6). `last`
-- is read by the caller before its first write, so a wrong-typed key fails cleanly.
local function next_fence(last, fence_key, fence_px)
  local t = redis.call('TIME')
  local fence = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local n = last and tonumber(last)
  if n and n + 1 > fence then fence = n + 1 end
  fence = string.format('%d', fence)
  redis.call('SET', fence_key, fence, 'PX', fence_px)
  return fence
end
-- Never shortens an expiry: other holdings may rely on the longer one.
local function extend_to(key, px)
  if redis.call('PTTL', key) < tonumber(px) then redis.call('PEXPIRE', key, px) end
end
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

Script make_script(std::string_view name, std::string source, int per_key_after) {
    // The shebang (Redis 7 script flags, none given) marks the script as one that may write:
    // a replica refuses it with READONLY instead of running it. Without it, a check or an
    // extension that only reads on its way to "not ours" would answer 0 from a demoted
    // primary whose data is being resynced, and a lease the new primary holds would be lost.
    source.insert(0, "#!lua\n");
    auto sha = sha1_hex(source);
    return {name, std::move(source), std::move(sha), per_key_after};
}

std::string with_helpers(std::string_view body) {
    std::string s(kHelpers);
    s += body;
    return s;
}

std::string sha1_hex(std::string_view data) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_Digest(data.data(), data.size(), md, &len, EVP_sha1(), nullptr);
    std::string hex;
    for (unsigned i = 0; i < len; ++i) hex += fmt::format("{:02x}", md[i]);
    return hex;
}

const Script& fenced_set_script() {
    static const Script s = make_script("fenced_set", std::string(kFencedSet));
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
