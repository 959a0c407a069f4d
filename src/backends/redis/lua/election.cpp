// LeaderElection scripts: the election key is a hash {leader: token, value, term}; the term is
// the fence of the election that made this leader. Every change is published on the observe
// channel (op_args[1]) so observers wake at once; candidates wait in the name's line.
#include "backends/redis/scripts.hpp"

namespace deadbolt::detail {
namespace {

// KEYS: election, fence, line. ARGV: token, px, fence_px, value, observe channel, box,
// member, ticket.
constexpr std::string_view kCampaign = R"lua(
local last = redis.call('GET', KEYS[2])
local found = kind_of(KEYS[1])
if found == 'leader' then
  local pttl = redis.call('PTTL', KEYS[1])
  return {0, pttl, line_up(KEYS[3], ARGV[7], ARGV[8], pttl)}
end
if found then return refuse(KEYS[1], found, 'a LeaderElection') end
redis.call('PUBLISH', ARGV[5], 'elected')
local term = next_fence(last, KEYS[2], ARGV[3])
redis.call('HSET', KEYS[1], 'leader', ARGV[1], 'value', ARGV[4], 'term', term)
redis.call('PEXPIRE', KEYS[1], ARGV[2])
leave_line(KEYS[3], ARGV[7], ARGV[8], ARGV[6])
return {1, term}
)lua";

// Lease-kind scripts: KEYS election, line; ARGV token, box, px, observe channel. Observers
// hear every resignation; of the candidates, the next in line is woken.
constexpr std::string_view kResign = R"lua(
if redis.call('HGET', KEYS[1], 'leader') == ARGV[1] then
  redis.call('PUBLISH', ARGV[4], 'resigned')
  local woken = wake(KEYS[2], ARGV[2])
  redis.call('DEL', KEYS[1])
  return 1 + woken
end
return 0
)lua";

constexpr std::string_view kExtend = R"lua(
if redis.call('HGET', KEYS[1], 'leader') == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return 0
)lua";

constexpr std::string_view kCheck = R"lua(
if redis.call('HGET', KEYS[1], 'leader') == ARGV[1] then return 1 end
return 0
)lua";

// KEYS: election. ARGV: token, value, observe channel. 1 = proclaimed, 0 = not the leader.
constexpr std::string_view kProclaim = R"lua(
if redis.call('HGET', KEYS[1], 'leader') ~= ARGV[1] then return 0 end
redis.call('PUBLISH', ARGV[3], 'proclaimed')
redis.call('HSET', KEYS[1], 'value', ARGV[2])
return 1
)lua";

// KEYS: election. Returns {value, term, pttl} or {} when nobody leads.
constexpr std::string_view kRead = R"lua(
local h = redis.call('HMGET', KEYS[1], 'value', 'term')
if not h[2] then return {} end
return {h[1], h[2], redis.call('PTTL', KEYS[1])}
)lua";

}  // namespace

const Script& campaign_script() {
    static const Script s = make_script("campaign", with_helpers(kCampaign));
    return s;
}

const LeaseKind& leader_kind() {
    static const Script extend = make_script("leader_extend", std::string(kExtend));
    static const Script resign = make_script("leader_resign", with_line(kResign));
    static const Script check = make_script("leader_check", std::string(kCheck));
    static const LeaseKind k{&extend, &resign, &check, true, "leader"};
    return k;
}

const Script& proclaim_script() {
    static const Script s = make_script("proclaim", std::string(kProclaim));
    return s;
}

const Script& leader_read_script() {
    static const Script s = make_script("leader_read", std::string(kRead));
    return s;
}

}  // namespace deadbolt::detail
