// What a MariaDB client sees without holding: who holds a GET_LOCK (IS_USED_LOCK, and the
// process list for where from and who waits), the names in use, and force-unlock, which
// ends the holder's connection (the only way to free another session's GET_LOCK).
#include <fmt/format.h>

#include <algorithm>

#include "backends/mariadb/names.hpp"
#include "backends/mariadb/store.hpp"
#include "core/name_pattern.hpp"

namespace deadbolt::detail {
namespace {

// The holder's connection id, its host, and how many wait, for lock name n (a literal).
std::string state_of(const std::string& n) {
    return fmt::format(
        "SELECT IS_USED_LOCK({0}), (SELECT HOST FROM information_schema.PROCESSLIST WHERE ID = "
        "IS_USED_LOCK({0})), (SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE STATE = "
        "'User lock' AND INFO LIKE CONCAT('%GET_LOCK(''', {0}, '''%'))",
        n);
}

}  // namespace

Status MyStore::statuses(const std::vector<std::string>& names,
                         std::vector<std::pair<LockStatus, Status>>& out) {
    std::string sql;
    for (const auto& n : names) sql += state_of(quoted(get_lock_name(n))) + ";";
    std::vector<SqlRows> rows;
    if (auto st = run_once(sql, rows); !st.ok()) return st;
    out.clear();
    for (const auto& r : rows) {
        LockStatus ls;
        ls.kind = "free";
        ls.waiters = std::atoi(r.at(0, 2).c_str());
        if (!r.null(0, 0)) {
            ls.held = true;
            ls.kind = "mutex";
            ls.holders = 1;
            ls.ttl = std::chrono::milliseconds(-1);  // kept while its session lives
            auto host = r.at(0, 1);
            ls.held_by.push_back(Holder{.host = host.substr(0, host.rfind(':')),
                                        .pid = 0,
                                        .since = {},
                                        .ttl = std::chrono::milliseconds(-1)});
        }
        out.emplace_back(std::move(ls), Status{});
    }
    return {};
}

Status MyStore::lock_names(std::string_view pattern, std::vector<std::string>& names) {
    std::vector<SqlRows> rows;
    if (auto st = run_once("SELECT name FROM deadbolt_names WHERE IS_USED_LOCK(lock_name) IS NOT "
                           "NULL",
                           rows);
        !st.ok())
        return st;
    names.clear();
    for (std::size_t i = 0; i < rows.back().rows.size(); ++i) {
        auto name = rows.back().at(i, 0);
        if (name_matches(pattern, name)) names.push_back(std::move(name));
    }
    std::ranges::sort(names);
    return {};
}

Status MyStore::force_unlock(const std::string& name, std::string& kind) {
    auto n = quoted(get_lock_name(name));
    std::vector<SqlRows> rows;
    if (auto st = run_once(fmt::format("SELECT IS_USED_LOCK({})", n), rows); !st.ok()) return st;
    if (rows.back().null(0, 0)) {
        kind = "free";
        return {};
    }
    kind = "mutex";
    // Needs the holder's user or CONNECTION ADMIN; everything else that session held goes.
    return run_once(fmt::format("KILL CONNECTION {}", rows.back().at(0, 0)), rows);
}

}  // namespace deadbolt::detail
