// CountDownLatch scripts. The count is a string key; an absent key is an open latch.
#include "backends/redis/scripts.hpp"

namespace deadbolt::detail {
namespace {

constexpr std::string_view kSet = R"lua(
local found = kind_of(KEYS[1])
if found and found ~= 'latch' then return refuse(KEYS[1], found, 'a CountDownLatch') end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
return 0
)lua";

// Only the call that takes the count to zero opens the latch (and reports it); later calls
// find no key and change nothing.
constexpr std::string_view kCountDown = R"lua(
local found = kind_of(KEYS[1])
if not found then return {-1, 0} end
if found ~= 'latch' then return refuse(KEYS[1], found, 'a CountDownLatch') end
local n = tonumber(redis.call('GET', KEYS[1]))
if n > 1 then return {redis.call('DECR', KEYS[1]), 0} end
redis.call('PUBLISH', ARGV[1], 'opened')
redis.call('DEL', KEYS[1])
return {0, 1}
)lua";

}  // namespace

const Script& latch_set_script() {
    static const Script s = make_script("latch_set", with_kinds(kSet));
    return s;
}
const Script& latch_count_down_script() {
    static const Script s = make_script("latch_count_down", with_kinds(kCountDown));
    return s;
}

}  // namespace deadbolt::detail
