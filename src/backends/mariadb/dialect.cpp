#include "backends/mariadb/dialect.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "backends/mariadb/names.hpp"

namespace deadbolt::detail {

long long whole_seconds(std::chrono::milliseconds ttl) {
    return std::max<long long>(1, std::chrono::ceil<std::chrono::seconds>(ttl).count());
}

std::vector<std::string> MyDialect::keys(const std::vector<std::string>& names) const {
    std::vector<std::string> lock_names;
    lock_names.reserve(names.size());
    for (const auto& n : names) lock_names.push_back(get_lock_name(n));
    std::sort(lock_names.begin(), lock_names.end());
    lock_names.erase(std::unique(lock_names.begin(), lock_names.end()), lock_names.end());
    std::vector<std::string> out;
    out.reserve(lock_names.size());
    for (const auto& n : lock_names) out.push_back(quoted(n));
    return out;
}

std::string MyDialect::keep(std::chrono::milliseconds ttl) const {
    return fmt::format("SET SESSION wait_timeout = {};", whole_seconds(ttl));
}

std::string MyDialect::try_take(const std::vector<std::string>& keys, bool /*shared*/,
                                bool fenced) const {
    auto fence = fenced ? std::string("NEXTVAL(deadbolt_fences)") : std::string("0");
    if (keys.empty()) return "SELECT " + fence;
    if (keys.size() == 1)
        return fmt::format("SELECT IF(COALESCE(GET_LOCK({}, 0), 0) = 1, {}, NULL)", keys[0], fence);
    // Nested IFs stop at the first lock refused; a user variable carries the count to the
    // statement that draws the fence.
    std::string take;
    for (std::size_t i = keys.size(); i-- > 0;)
        take = fmt::format("IF(COALESCE(GET_LOCK({}, 0), 0) = 1, {}, {})", keys[i],
                           i + 1 == keys.size() ? std::to_string(keys.size()) : take, i);
    return fmt::format("SET @deadbolt_n = {}; SELECT IF(@deadbolt_n = {}, {}, NULL), @deadbolt_n",
                       take, keys.size(), fence);
}

std::string MyDialect::wait_for(const std::string& key, bool /*shared*/,
                                std::chrono::milliseconds timeout) const {
    // GET_LOCK takes fractional seconds; a year stands for "without end".
    double seconds = timeout.count() > 0 ? static_cast<double>(timeout.count()) / 1000 : 31536000;
    return fmt::format("SELECT GET_LOCK({}, {:.3f})", key, seconds);
}

bool MyDialect::took(const SqlRows& answer) const {
    return answer.at(0, 0) == "1";
}

std::string MyDialect::give_back(const std::vector<std::string>& keys, bool /*shared*/) const {
    std::string sum;
    for (const auto& k : keys)
        sum += fmt::format("{}COALESCE(RELEASE_LOCK({}) = 1, 0)", sum.empty() ? "" : " + ", k);
    return "SELECT " + sum;
}

std::string MyDialect::count_held(const std::vector<std::string>& keys) const {
    std::string sum;
    for (const auto& k : keys)
        sum += fmt::format("{}COALESCE(IS_USED_LOCK({}) = CONNECTION_ID(), 0)",
                           sum.empty() ? "" : " + ", k);
    return "SELECT " + sum;
}

}  // namespace deadbolt::detail
