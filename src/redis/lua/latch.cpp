// CountDownLatch scripts. The count is a string key; an absent key is an open latch.
#include "redis/scripts.hpp"

namespace deadbolt::detail {
namespace {

constexpr std::string_view kSet = R"lua(
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
return 0
)lua";

// Only the call that takes the count to zero opens the latch (and reports it); later calls
// find no key and change nothing.
constexpr std::string_view kCountDown = R"lua(
if redis.call('EXISTS', KEYS[1]) == 0 then return {-1, 0} end
local n = redis.call('DECR', KEYS[1])
if n > 0 then return {n, 0} end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[1], 'opened')
return {0, 1}
)lua";

}  // namespace

const Script& latch_set_script() {
    static const Script s = make_script("latch_set", std::string(kSet));
    return s;
}
const Script& latch_count_down_script() {
    static const Script s = make_script("latch_count_down", std::string(kCountDown));
    return s;
}

}  // namespace deadbolt::detail
