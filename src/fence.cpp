#include "deadbolt/fence.hpp"

#include <fmt/format.h>

namespace deadbolt {

std::optional<std::uint64_t> parse_fence(std::string_view text, std::string* why) {
    auto fail = [&](std::string msg) -> std::optional<std::uint64_t> {
        if (why) *why = std::move(msg);
        return std::nullopt;
    };
    if (text.empty())
        return fail(
            "empty fence: pass the lease's fence, e.g. \"$DEADBOLT_FENCE\" inside "
            "`deadbolt run`");
    std::uint64_t n = 0;
    for (char c : text) {
        // Only digits: "0x10", "+5", " 7" or "1e3" would be read as some other number.
        if (c < '0' || c > '9')
            return fail(fmt::format("fence '{}' is not a decimal integer", text));
        n = n * 10 + static_cast<std::uint64_t>(c - '0');
        if (n > kMaxFence)
            return fail(fmt::format("fence '{}' is out of range: deadbolt's fences are 1..{}", text,
                                    kMaxFence));
    }
    if (n == 0)
        return fail(
            "fence 0 is no fence (a shared holding, or fencing=0): pass a fence "
            "from an exclusive lease");
    return n;
}

}  // namespace deadbolt
