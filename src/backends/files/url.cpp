#include "backends/files/url.hpp"

#include <fmt/format.h>

#include "core/url_text.hpp"

namespace deadbolt::detail {
namespace {

FileUrl fail(std::string why) {
    FileUrl u;
    u.error = std::move(why);
    return u;
}

}  // namespace

FileUrl parse_file_url(std::string_view url, const ClientOptions& base) {
    FileUrl u;
    u.options = base;
    if (!url.starts_with("file://"))
        return fail(fmt::format("'{}': expected file:///absolute/directory", url));
    std::string_view rest = url.substr(7);
    std::string_view query;
    if (auto q = rest.find('?'); q != std::string_view::npos) {
        query = rest.substr(q + 1);
        rest = rest.substr(0, q);
    }
    if (rest.starts_with("localhost/")) rest.remove_prefix(9);
    if (!rest.starts_with("/"))
        return fail(
            fmt::format("'{}': a file URL names a directory of this machine by its "
                        "absolute path (file:///var/lock/app); file locks cannot reach "
                        "another host",
                        url));
    std::string dir;
    if (!percent_decode(rest, dir)) return fail(fmt::format("'{}': a malformed %-escape", url));
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    if (dir.find('\0') != std::string::npos)
        return fail(fmt::format("'{}': a NUL in the path", url));
    u.dir = dir;
    if (auto err = userless_query_options(query, u.options, "file",
                                          "file locks have no users or passwords: the "
                                          "directory's permissions say who may lock");
        !err.empty())
        return fail(std::move(err));
    u.ok = true;
    return u;
}

}  // namespace deadbolt::detail
