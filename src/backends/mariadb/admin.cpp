// What a MariaDB client sees without holding: who holds a GET_LOCK (IS_USED_LOCK; the row
// deadbolt's holder wrote with its grant, or the process list for another client's address;
// who waits), the names in use, and force-unlock, which ends the holder's connection (the only
// way to free another session's GET_LOCK).
#include <fmt/format.h>

#include <algorithm>

#include "backends/mariadb/names.hpp"
#include "backends/mariadb/store.hpp"
#include "core/name_pattern.hpp"

namespace deadbolt::detail {
namespace {

// The holder's connection id, its address, how many wait, and the row the holder's session
// wrote when it took the lock (none: a GET_LOCK deadbolt did not take), for lock name n (a
// literal).
std::string state_of(const std::string& n) {
    return fmt::format(
        "SELECT IS_USED_LOCK({0}), (SELECT HOST FROM information_schema.PROCESSLIST WHERE ID = "
        "IS_USED_LOCK({0})), (SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE STATE = "
        "'User lock' AND INFO LIKE CONCAT('%GET_LOCK(''', {0}, '''%')), h.conn, h.fence, "
        "h.ttl_ms, h.since_ms, h.pid, h.host FROM (SELECT 1) o LEFT JOIN deadbolt_holders h ON "
        "h.conn = IS_USED_LOCK({0})",
        n);
}

LockStatus status_of(const SqlRows& r) {
    LockStatus ls;
    ls.kind = "free";
    ls.waiters = std::atoi(r.at(0, 2).c_str());
    if (r.null(0, 0)) return ls;
    ls.held = true;
    ls.kind = "mutex";
    ls.holders = 1;
    ls.ttl = std::chrono::milliseconds(-1);  // kept while its session lives
    Holder h{.host = {}, .pid = 0, .since = {}, .ttl = std::chrono::milliseconds(-1)};
    if (!r.null(0, 3)) {
        // deadbolt's: ends with its session after its TTL of silence (wait_timeout).
        h.host = r.at(0, 8);
        h.pid = std::atoi(r.at(0, 7).c_str());
        h.since = std::chrono::system_clock::time_point(
            std::chrono::milliseconds(std::stoll(r.at(0, 6))));
        ls.session_timeout = std::chrono::milliseconds(std::stoll(r.at(0, 5)));
        if (!r.null(0, 4)) ls.last_fence = std::stoull(r.at(0, 4));  // none: taking its names
    } else {
        // The process list shows another user's session only to a user with PROCESS.
        auto address = r.at(0, 1);
        h.client = "GET_LOCK of another client";
        if (!address.empty()) h.client += " at " + address.substr(0, address.rfind(':'));
    }
    ls.held_by.push_back(std::move(h));
    return ls;
}

}  // namespace

Status MyStore::statuses(const std::vector<std::string>& names,
                         std::vector<std::pair<LockStatus, Status>>& out) {
    std::string sql;
    for (const auto& n : names) sql += state_of(quoted(get_lock_name(n))) + ";";
    std::vector<SqlRows> rows;
    if (auto st = run_once(sql, rows); !st.ok()) return st;
    out.clear();
    for (const auto& r : rows) out.emplace_back(status_of(r), Status{});
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
    for (std::size_t i = 0; i < rows.back().size(); ++i) {
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
