#include "backends/mariadb/dialect.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <span>

#include "backends/mariadb/names.hpp"

namespace deadbolt::detail {

long long whole_seconds(std::chrono::milliseconds ttl) {
    return std::max<long long>(1, std::chrono::ceil<std::chrono::seconds>(ttl).count());
}

MyDialect::MyDialect(std::optional<TokenOrigin> me, bool returning)
    : pid_(me ? me->pid : 0), returning_(returning) {
    auto host = me ? me->host : std::string("unknown");
    std::erase_if(host, [](char c) { return c == '\'' || c == '\\'; });
    host_ = "'" + host.substr(0, 64) + "'";
}

std::vector<std::string> MyDialect::keys(std::span<const std::string> names) const {
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

std::string MyDialect::try_take(const std::vector<std::string>& keys, std::size_t from,
                                bool /*shared*/, bool fenced, std::chrono::milliseconds ttl) const {
    const std::string_view fence = fenced ? "NEXTVAL(deadbolt_fences)" : "0";
    const std::span<const std::string> tried(keys.begin() + static_cast<std::ptrdiff_t>(from),
                                             keys.end());
    // The session's row in deadbolt_holders, with fence f. Every try writes one: appended,
    // where fmt::format's parsing was a tenth of an uncontended cycle's instructions.
    std::string sql;
    sql.reserve(256 + keys.front().size() + host_.size());
    auto row = [&](std::string_view f) {
        sql += "CONNECTION_ID(), ";
        sql += keys.front();
        sql += ", ";
        sql += f;
        sql += ", ";
        sql += std::to_string(ttl.count());
        sql += ", ROUND(UNIX_TIMESTAMP(NOW(6)) * 1000), ";
        sql += std::to_string(pid_);
        sql += ", ";
        sql += host_;
    };
    // One statement where the server can (each one more costs it about as much as the try):
    // the row is written only when its WHERE took the lock, and a refusal answers no row.
    if (returning_ && (tried.empty() || (from == 0 && tried.size() == 1))) {
        sql += "REPLACE INTO deadbolt_holders SELECT ";
        row(fence);
        sql += " FROM DUAL";
        if (!tried.empty()) {
            sql += " WHERE COALESCE(GET_LOCK(";
            sql += tried[0];
            sql += ", 0), 0) = 1";
        }
        sql += " RETURNING fence";
        return sql;
    }
    // @deadbolt_f: the fence once every key is held, else NULL; what the session holds is
    // marked in its row (a MultiLock taking its names: no fence yet).
    std::string_view held_any;
    if (tried.empty()) {
        sql = fmt::format("SET @deadbolt_f = {};", fence);
        held_any = "TRUE";
    } else if (tried.size() == 1) {
        sql = fmt::format("SET @deadbolt_f = IF(COALESCE(GET_LOCK({}, 0), 0) = 1, {}, NULL);",
                          tried[0], fence);
        held_any = from > 0 ? "TRUE" : "@deadbolt_f IS NOT NULL";
    } else {
        // Nested IFs stop at the first lock refused and count the ones taken.
        std::string count;
        for (std::size_t i = tried.size(); i-- > 0;)
            count = fmt::format("IF(COALESCE(GET_LOCK({}, 0), 0) = 1, {}, {})", tried[i],
                                i + 1 == tried.size() ? std::to_string(tried.size()) : count, i);
        sql = fmt::format("SET @deadbolt_n = {}; SET @deadbolt_f = IF(@deadbolt_n = {}, {}, NULL);",
                          count, tried.size(), fence);
        held_any = from > 0 ? "TRUE" : "@deadbolt_n > 0";
    }
    sql += " REPLACE INTO deadbolt_holders SELECT ";
    row("@deadbolt_f");
    sql += " FROM DUAL WHERE ";
    sql += held_any;
    sql += "; SELECT @deadbolt_f";
    if (tried.size() > 1) sql += ", @deadbolt_n";
    return sql;
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
    std::string sql = "SELECT ";  // every release's: appended, not formatted
    for (const auto& k : keys) {
        if (&k != &keys.front()) sql += " + ";
        sql += "COALESCE(RELEASE_LOCK(";
        sql += k;
        sql += ") = 1, 0)";
    }
    return sql;
}

std::string MyDialect::count_held(const std::vector<std::string>& keys) const {
    std::string sum;
    for (const auto& k : keys)
        sum += fmt::format("{}COALESCE(IS_USED_LOCK({}) = CONNECTION_ID(), 0)",
                           sum.empty() ? "" : " + ", k);
    return "SELECT " + sum;
}

}  // namespace deadbolt::detail
