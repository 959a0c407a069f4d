// Redlock's second round (DESIGN section 6): the agreed fence is written into the counter of
// every node where our key still stands, so a later acquisition there reads a higher counter.
#include "redis/scripts.hpp"

namespace deadbolt::detail {
namespace {

// KEYS: lock, fence. ARGV: token, fence, fence_px. A counter that is not a number (written by
// someone else) is replaced rather than failing the round.
constexpr std::string_view kRaiseFence = R"lua(
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local last = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
if last < tonumber(ARGV[2]) then
  redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
else
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
return 1
)lua";

}  // namespace

const Script& raise_fence_script() {
    static const Script s = make_script("raise_fence", std::string(kRaiseFence));
    return s;
}

}  // namespace deadbolt::detail
