// Replies built by hand, as a server would send them, for the pure reply readers' tests.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "backends/redis/net/resp.hpp"

namespace deadbolt::test {

inline detail::Reply integer(long long v) {
    detail::Reply r;
    r.type = detail::Reply::Type::integer;
    r.integer = v;
    return r;
}
inline detail::Reply str(std::string s) {
    detail::Reply r;
    r.type = detail::Reply::Type::string;
    r.str = std::move(s);
    return r;
}
inline detail::Reply arr(std::vector<detail::Reply> e) {
    detail::Reply r;
    r.type = detail::Reply::Type::array;
    r.elements = std::move(e);
    return r;
}

}  // namespace deadbolt::test
