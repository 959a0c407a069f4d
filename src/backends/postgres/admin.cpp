// What a PostgreSQL client sees without holding: a lock's state from pg_locks (the server's
// own table of who holds and who waits), the names in use, and force-unlock, which ends the
// holders' sessions (the only way to take a session's advisory lock from outside).
#include <fmt/format.h>

#include <algorithm>

#include "backends/postgres/keys.hpp"
#include "backends/postgres/store.hpp"
#include "core/name_pattern.hpp"

namespace deadbolt::detail {
namespace {

// pg_locks' rows of the advisory lock on key k (granted ones first).
std::string locks_of(std::int64_t k) {
    auto u = static_cast<std::uint64_t>(k);
    return fmt::format(
        "SELECT l.granted, l.mode, l.pid, coalesce(a.client_hostname, host(a.client_addr), "
        "'local'), coalesce(a.application_name, '') FROM pg_locks l "
        "LEFT JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND "
        "l.objsubid = 1 AND l.classid = {} AND l.objid = {} ORDER BY l.granted DESC",
        u >> 32, u & 0xffffffffU);
}

// A deadbolt session names its host and process in application_name; another client's
// shows its address only.
Holder holder_of(const std::string& application, const std::string& address) {
    Holder h{.host = address, .pid = 0, .since = {}, .ttl = std::chrono::milliseconds(-1)};
    constexpr std::string_view kOurs = "deadbolt ";
    auto colon = application.rfind(':');
    if (application.starts_with(kOurs) && colon != std::string::npos && colon > kOurs.size()) {
        h.host = application.substr(kOurs.size(), colon - kOurs.size());
        h.pid = std::atoi(application.c_str() + colon + 1);
    }
    return h;
}

LockStatus status_of(const SqlRows& rows) {
    LockStatus ls;
    ls.kind = "free";
    for (std::size_t i = 0; i < rows.rows.size(); ++i) {
        if (rows.at(i, 0) != "t") {
            ++ls.waiters;
            continue;
        }
        ls.held = true;
        ++ls.holders;
        ls.kind = rows.at(i, 1) == "ShareLock" ? "readers" : "mutex";
        if (ls.held_by.size() < static_cast<std::size_t>(kMaxListedHolders))
            ls.held_by.push_back(holder_of(rows.at(i, 4), rows.at(i, 3)));
    }
    // A holder keeps it while its session lives: no expiry to show.
    if (ls.held) ls.ttl = std::chrono::milliseconds(-1);
    return ls;
}

}  // namespace

Status PgStore::statuses(const std::vector<std::string>& names,
                         std::vector<std::pair<LockStatus, Status>>& out) {
    std::string sql;
    for (const auto& n : names) sql += locks_of(advisory_key(n)) + ";";
    std::vector<SqlRows> rows;
    if (auto st = run_once(sql, rows); !st.ok()) return st;
    out.clear();
    for (const auto& r : rows) out.emplace_back(status_of(r), Status{});
    return {};
}

Status PgStore::lock_names(std::string_view pattern, std::vector<std::string>& names) {
    // A key cannot be turned back into its name: the names deadbolt has used are recorded,
    // and those whose key is held or waited for now are listed.
    std::vector<SqlRows> rows;
    auto st = run_once(
        fmt::format("SELECT n.name FROM {}.names n WHERE EXISTS (SELECT 1 FROM pg_locks l WHERE "
                    "l.locktype = 'advisory' AND l.objsubid = 1 AND l.classid = ((n.key >> 32) & "
                    "4294967295)::oid AND l.objid = (n.key & 4294967295)::oid)",
                    schema()),
        rows);
    if (!st.ok()) return st;
    names.clear();
    for (std::size_t i = 0; i < rows.front().rows.size(); ++i) {
        auto name = bytea_value(rows.front().at(i, 0));
        if (name_matches(pattern, name)) names.push_back(std::move(name));
    }
    std::ranges::sort(names);
    return {};
}

Status PgStore::force_unlock(const std::string& name, std::string& kind) {
    auto u = static_cast<std::uint64_t>(advisory_key(name));
    std::vector<SqlRows> rows;
    // Ending the holders' sessions is the only way to free a session's advisory lock from
    // outside: everything else those sessions held goes too. It needs the holders' role or
    // pg_signal_backend.
    auto st = run_once(
        fmt::format("SELECT l.mode, pg_terminate_backend(l.pid) FROM pg_locks l WHERE "
                    "l.locktype = 'advisory' AND l.objsubid = 1 AND l.classid = {} AND l.objid = "
                    "{} AND l.granted",
                    u >> 32, u & 0xffffffffU),
        rows);
    if (!st.ok()) return st;
    const auto& r = rows.front();
    kind = r.rows.empty() ? "free" : r.at(0, 0) == "ShareLock" ? "readers" : "mutex";
    for (std::size_t i = 0; i < r.rows.size(); ++i)
        if (r.at(i, 1) != "t")
            return Status::error(errc::permission_denied,
                                 fmt::format("PostgreSQL did not end a holder of '{}'", name));
    return {};
}

}  // namespace deadbolt::detail
