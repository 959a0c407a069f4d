#include "backends/redis/scripts.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <algorithm>
#include <cctype>

#include "backends/redis/net/resp.hpp"

namespace deadbolt::detail {
namespace {

// TIME makes a script non-deterministic, which needs effects replication: Redis 7, the first
// that runs a script with a shebang (make_script), always replicates effects. TIME is read
// once, first, so a script never writes and then fails on it.
constexpr std::string_view kHelpers = R"lua(
local server_time = redis.call('TIME')
local function now_ms()
  return tonumber(server_time[1]) * 1000 + math.floor(tonumber(server_time[2]) / 1000)
end
-- max(last + 1, server time in us): increasing even after the counter expired or was lost
-- in a restart, as long as the server clock does not step back (DESIGN section 6). `last`
-- is read by the caller before its first write, so a wrong-typed key fails cleanly.
-- Redlock proposes a fence ('<fence_px>@<fence>'): a node whose counter is below it takes it
-- instead of its clock, so that a majority can agree on one fence in the lock's own round.
local function next_fence(last, fence_key, fence_px)
  local fence = tonumber(server_time[1]) * 1000000 + tonumber(server_time[2])
  local n = last and tonumber(last)
  local px, proposal = string.match(fence_px, '^(%d+)@(%d+)$')
  if proposal then
    proposal = tonumber(proposal)
    if n or proposal > fence then fence = proposal end
    fence_px = px
  end
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

// What holds a lock key (nil when nothing): every kind's acquire and `status` tell the kinds
// apart the same way. 'lock' is a string token (Mutex, FairMutex, RWLock writer, MultiLock, or a
// redis-py lock); 'readers' the mark an RWLock's readers keep there while they hold it; a latch
// is a short count; a type no kind uses is named as it is ('list', ...).
constexpr std::string_view kKinds = R"lua(
local readers_mark = 'deadbolt:rwlock-readers'
local function kind_of(key)
  local t = redis.call('TYPE', key)['ok']
  if t == 'none' then return nil end
  if t == 'string' then
    local v = redis.call('GET', key)
    if v == readers_mark then return 'readers' end
    if #v < 20 and string.match(v, '^%d+$') then return 'latch' end
    return 'lock'
  end
  if t == 'hash' then
    if redis.call('HEXISTS', key, '') == 1 then return 'reentrant' end
    if redis.call('HEXISTS', key, 'leader') == 1 then return 'leader' end
    if redis.call('HEXISTS', key, 'cfg') == 1 then return 'rate' end
  end
  if t == 'zset' then return 'semaphore' end
  return t
end
-- Refuses at once, before any write: one name, one kind at a time (readers and exclusive locks
-- excepted: they wait for each other; both are a string under the name, so they cannot meet).
local function waits_for(found) return found == 'lock' or found == 'readers' end
local function refuse(key, found, want)
  local words = ({lock = 'an exclusive lock (Mutex, FairMutex, RWLock writer or MultiLock)',
    readers = 'RWLock readers',
    latch = 'a CountDownLatch', reentrant = 'a ReentrantMutex', leader = 'a LeaderElection',
    rate = 'a RateLimiter', semaphore = 'a Semaphore'})[found] or
    ('a ' .. found .. ' that deadbolt did not write')
  return redis.error_reply('DEADBOLT-KIND key ' .. key .. ' holds ' .. words .. '; ' .. want ..
    ' cannot share its name')
end
)lua";

// KEYS: data, record (highest fence), version (writes taken). ARGV: fence, value, and the
// version the writer read ('' = any). The record and version inherit the data key's TTL, so
// they live exactly as long as what they guard. Returns {accepted, highest, version}.
constexpr std::string_view kFencedSet = R"lua(
local high = redis.call('GET', KEYS[2])
local version = tonumber(redis.call('GET', KEYS[3]) or '0')
if high and tonumber(high) > tonumber(ARGV[1]) then return {0, high, version} end
if ARGV[3] ~= '' and tonumber(ARGV[3]) ~= version then return {0, high or '0', version} end
local ttl = redis.call('PTTL', KEYS[1])
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
version = version + 1
if ttl > 0 then
  redis.call('SET', KEYS[2], ARGV[1], 'PX', ttl)
  redis.call('SET', KEYS[3], version, 'PX', ttl)
else
  redis.call('SET', KEYS[2], ARGV[1])
  redis.call('SET', KEYS[3], version)
end
return {1, ARGV[1], version}
)lua";

// KEYS: data, record, version. Returns {value or false, version}, read together.
constexpr std::string_view kFencedGet = R"lua(
return {redis.call('GET', KEYS[1]), tonumber(redis.call('GET', KEYS[3]) or '0')}
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

std::vector<std::string> script_commands(std::string_view source) {
    std::vector<std::string> out;
    for (std::string_view call : {"redis.call('", "redis.pcall('"}) {
        for (auto at = source.find(call); at != std::string_view::npos;
             at = source.find(call, at + 1)) {
            auto start = at + call.size();
            auto end = source.find('\'', start);
            std::string cmd(source.substr(start, end - start));
            for (auto& c : cmd) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
            out.push_back(std::move(cmd));
        }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

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
    s += kKinds;
    s += line_lua();
    s += body;
    return s;
}

std::string with_kinds(std::string_view body) {
    std::string s(kKinds);
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

const Script& fenced_get_script() {
    static const Script s = make_script("fenced_get", std::string(kFencedGet));
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

std::string eval_of_evalsha(std::string_view evalsha, const Script& s) {
    // "*N\r\n", then "EVALSHA" and the SHA1 as bulk strings, then numkeys, keys and args, which
    // EVAL takes the same way.
    const std::string head = fmt::format("$7\r\nEVALSHA\r\n${}\r\n{}\r\n", s.sha1.size(), s.sha1);
    const auto count_end = evalsha.find("\r\n");
    if (!evalsha.starts_with('*') || count_end == std::string_view::npos ||
        evalsha.substr(count_end + 2, head.size()) != head)
        return {};
    std::string out(evalsha.substr(0, count_end + 2));
    out += fmt::format("$4\r\nEVAL\r\n${}\r\n", s.source.size());
    out += s.source;
    out += "\r\n";
    out += evalsha.substr(count_end + 2 + head.size());
    return out;
}

}  // namespace deadbolt::detail
