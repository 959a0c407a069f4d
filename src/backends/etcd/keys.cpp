#include "backends/etcd/keys.hpp"

#include <fmt/format.h>

#include <charconv>

namespace deadbolt::detail {

std::string lock_dir(std::string_view prefix, std::string_view name) {
    std::string d;
    d.reserve(prefix.size() + name.size() + 1);
    d.append(prefix).append(name).push_back('/');
    return d;
}

std::string contender_key(std::string_view dir, std::int64_t lease) {
    return fmt::format("{}{:x}", dir, static_cast<std::uint64_t>(lease));
}

std::string reader_key(std::string_view dir, std::int64_t lease) {
    return fmt::format("{}read-{:x}", dir, static_cast<std::uint64_t>(lease));
}

std::string range_end(std::string_view dir) {
    std::string end(dir);
    while (!end.empty()) {
        auto& last = reinterpret_cast<unsigned char&>(end.back());
        if (last < 0xff) {
            ++last;
            return end;
        }
        end.pop_back();
    }
    return std::string(1, '\0');  // every key from dir on
}

bool is_contender(std::string_view dir, std::string_view key) {
    return key.size() > dir.size() && key.starts_with(dir) &&
           key.find('/', dir.size()) == std::string_view::npos;
}

bool is_reader(std::string_view dir, std::string_view key) {
    return is_contender(dir, key) && key.substr(dir.size()).starts_with("read-");
}

}  // namespace deadbolt::detail
