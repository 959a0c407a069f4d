#include "backends/redis/replies.hpp"

#include <charconv>

namespace deadbolt::detail {
namespace {

Status unexpected(std::string_view what) {
    return Status::error(errc::protocol_error,
                         std::string("unexpected reply to the ") + std::string(what) +
                             " script: is another program using deadbolt's key names?");
}

}  // namespace

bool to_u64(const Reply& r, std::uint64_t& out) {
    if (r.type == Reply::Type::integer) {
        if (r.integer < 0) return false;
        out = static_cast<std::uint64_t>(r.integer);
        return true;
    }
    if (r.type != Reply::Type::string) return false;
    auto [p, ec] = std::from_chars(r.str.data(), r.str.data() + r.str.size(), out);
    return ec == std::errc() && p == r.str.data() + r.str.size();
}

Status parse_acquire(const Reply& r, AttemptOutcome& out, bool fenced) {
    if (r.type != Reply::Type::array || r.elements.size() < 2 ||
        r.elements[0].type != Reply::Type::integer)
        return unexpected("acquire");
    out.acquired = r.elements[0].integer == 1 || r.elements[0].integer == 2;
    out.again = r.elements[0].integer == 2;
    if (out.acquired) {
        for (std::size_t i = 1; i < r.elements.size(); ++i) {
            std::uint64_t f = 0;
            if (!to_u64(r.elements[i], f) || (fenced && f == 0)) return unexpected("acquire");
            if (r.elements.size() > 2) out.fences.push_back(f);
        }
        to_u64(r.elements[1], out.fence);
        return {};
    }
    if (r.elements.size() > 3 || r.elements[1].type != Reply::Type::integer ||
        (r.elements.size() == 3 && r.elements[2].type != Reply::Type::string))
        return unexpected("acquire");
    if (r.elements.size() == 3) out.ticket = r.elements[2].str;
    // PTTL -2 (key vanished between SET and PTTL) means free now: retry at once.
    out.pttl = std::chrono::milliseconds(r.elements[1].integer == -2 ? 0 : r.elements[1].integer);
    return {};
}

Status parse_fenced(const Reply& r, bool& accepted, std::uint64_t& highest,
                    std::uint64_t& version) {
    if (r.type != Reply::Type::array || r.elements.size() != 3 ||
        r.elements[0].type != Reply::Type::integer || !to_u64(r.elements[1], highest) ||
        !to_u64(r.elements[2], version))
        return unexpected("fenced_set");
    accepted = r.elements[0].integer == 1;
    return {};
}

}  // namespace deadbolt::detail
