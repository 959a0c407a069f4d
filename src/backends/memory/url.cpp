#include "backends/memory/url.hpp"

#include <fmt/format.h>

#include "core/url_text.hpp"

namespace deadbolt::detail {
namespace {

MemoryUrl fail(std::string why) {
    MemoryUrl u;
    u.error = std::move(why);
    return u;
}

}  // namespace

std::string memory_name_error(std::string_view name) {
    if (name.empty())
        return "a memory space needs a name (memory://tests): the clients of one name share "
               "their locks";
    if (name.find('\0') != std::string_view::npos) return "a NUL in the memory space's name";
    return "";
}

MemoryUrl parse_memory_url(std::string_view url, const ClientOptions& base) {
    MemoryUrl u;
    u.options = base;
    if (!url.starts_with("memory://"))
        return fail(fmt::format("'{}': expected memory://NAME", url));
    std::string_view rest = url.substr(9);
    std::string_view query;
    if (auto q = rest.find('?'); q != std::string_view::npos) {
        query = rest.substr(q + 1);
        rest = rest.substr(0, q);
    }
    if (!percent_decode(rest, u.space)) return fail(fmt::format("'{}': a malformed %-escape", url));
    if (auto e = memory_name_error(u.space); !e.empty())
        return fail(fmt::format("'{}': {}", url, e));
    if (auto err = userless_query_options(query, u.options, "memory",
                                          "a memory space has no users or passwords: every "
                                          "client of the process may use it");
        !err.empty())
        return fail(std::move(err));
    u.ok = true;
    return u;
}

}  // namespace deadbolt::detail
