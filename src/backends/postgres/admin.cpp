// What a PostgreSQL client sees without holding: a lock's state from pg_locks (the server's
// own table of who holds and who waits) and the rows of what is kept as rows (a semaphore's
// permits, a reentrant lock, an election's leader), the names in use, and force-unlock, which ends
// the holders' sessions (the only way to take a session's advisory lock from outside).
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "backends/postgres/dialect.hpp"
#include "backends/postgres/keys.hpp"
#include "backends/postgres/store.hpp"
#include "core/name_pattern.hpp"
#include "core/token.hpp"

namespace deadbolt::detail {
namespace {

// pg_locks' rows of the advisory lock on key k (granted ones first), each with the value
// of the election it leads, if it does.
std::string locks_of(const std::string& schema, std::int64_t k) {
    auto u = static_cast<std::uint64_t>(k);
    return fmt::format(
        "SELECT l.granted, l.mode, l.pid, coalesce(a.client_hostname, host(a.client_addr), "
        "'local'), coalesce(a.application_name, ''), e.value, e.term FROM pg_locks l "
        "LEFT JOIN pg_stat_activity a ON a.pid = l.pid LEFT JOIN {0}.leaders e ON e.key = {1} "
        "AND e.pid = l.pid AND l.granted WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND "
        "l.classid = {2} AND l.objid = {3} ORDER BY l.granted DESC",
        schema, k, u >> 32, u & 0xffffffffU);
}

// The live rows of a semaphore or reentrant lock on key k, soonest to expire last.
std::string rows_of(const std::string& schema, std::int64_t k) {
    return fmt::format(
        "SELECT permits, holds, ceil(extract(epoch FROM expires - clock_timestamp()) * 1000), "
        "id, fence FROM {}.permits WHERE key = {} AND expires > clock_timestamp() ORDER BY "
        "expires DESC",
        schema, k);
}

// A deadbolt session names its host, process and holding in application_name (dialect.hpp);
// another client's is named by its own application_name and address.
Holder holder_of(const std::string& application, const std::string& address,
                 const std::optional<PgLabel>& ours) {
    Holder h{.host = {}, .pid = 0, .since = {}, .ttl = std::chrono::milliseconds(-1)};
    if (ours) {
        h.host = ours->host;
        h.pid = ours->pid;
    } else {
        h.client = fmt::format("{} from {}",
                               application.empty() ? "psql or another session"
                                                   : fmt::format("'{}' session", application),
                               address);
    }
    return h;
}

LockStatus status_of(const SqlRows& rows) {
    LockStatus ls;
    ls.kind = "free";
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (rows.at(i, 0) != "t") {
            ++ls.waiters;
            continue;
        }
        ls.held = true;
        ++ls.holders;
        ls.kind = rows.at(i, 1) == "ShareLock" ? "readers" : "mutex";
        auto ours = parse_pg_label(rows.at(i, 4));
        // A holding ends with its session, after its TTL of silence (idle_session_timeout).
        if (ours && ours->holding) {
            ls.session_timeout = std::max(ls.session_timeout, ours->ttl);
            if (ours->fence) ls.last_fence = std::max(ls.last_fence, *ours->fence);
        }
        if (!rows.null(i, 5)) {
            ls.kind = "leader";
            ls.value = bytea_value(rows.at(i, 5));
            ls.last_fence = std::stoull(rows.at(i, 6));
        }
        if (ls.held_by.size() < static_cast<std::size_t>(kMaxListedHolders))
            ls.held_by.push_back(holder_of(rows.at(i, 4), rows.at(i, 3), ours));
    }
    // Held while its session lives: no expiry of its own (session_timeout says how it ends).
    if (ls.held) ls.ttl = std::chrono::milliseconds(-1);
    return ls;
}

// A semaphore's or reentrant lock's rows; locks: its gate's (whoever stands there, or waits
// for it, waits for a permit).
LockStatus rows_status(const SqlRows& rows, const SqlRows& locks) {
    LockStatus ls;
    ls.held = true;
    ls.permits = std::stoi(rows.at(0, 0));
    ls.kind = ls.permits == 0 ? "reentrant" : "semaphore";
    ls.holders = static_cast<int>(rows.size());
    ls.waiters = static_cast<int>(locks.size());
    ls.ttl = std::chrono::milliseconds(std::stoll(rows.at(rows.size() - 1, 2)));
    if (ls.kind == "reentrant") ls.last_fence = std::stoull(rows.at(0, 4));
    for (std::size_t i = 0; i < rows.size() && i < kMaxListedHolders; ++i) {
        Holder h{.ttl = std::chrono::milliseconds(std::stoll(rows.at(i, 2)))};
        if (auto o = token_origin(bytea_value(rows.at(i, 3)))) h.host = o->host, h.pid = o->pid;
        ls.held_by.push_back(std::move(h));
    }
    return ls;
}

}  // namespace

Status PgStore::statuses(const std::vector<std::string>& names,
                         std::vector<std::pair<LockStatus, Status>>& out) {
    std::string sql;
    for (const auto& n : names)
        sql += locks_of(schema_, advisory_key(n)) + ";" + rows_of(schema_, advisory_key(n)) + ";";
    std::vector<SqlRows> rows;
    if (auto st = run_once(sql, rows); !st.ok()) return st;
    out.clear();
    for (std::size_t i = 0; i + 1 < rows.size(); i += 2)
        out.emplace_back(
            rows[i + 1].empty() ? status_of(rows[i]) : rows_status(rows[i + 1], rows[i]), Status{});
    return {};
}

Status PgStore::lock_names(std::string_view pattern, std::vector<std::string>& names) {
    // A key cannot be turned back into its name: the names deadbolt has used are recorded,
    // and those whose key is held or waited for now, or that have live rows, are listed.
    std::vector<SqlRows> rows;
    auto st = run_once(
        fmt::format("SELECT n.name FROM {0}.names n WHERE EXISTS (SELECT 1 FROM pg_locks l "
                    "WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.classid = ((n.key >> "
                    "32) & 4294967295)::oid AND l.objid = (n.key & 4294967295)::oid) OR EXISTS "
                    "(SELECT 1 FROM {0}.permits p WHERE p.key = n.key AND p.expires > "
                    "clock_timestamp())",
                    schema()),
        rows);
    if (!st.ok()) return st;
    names.clear();
    for (std::size_t i = 0; i < rows.front().size(); ++i) {
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
    kind = r.empty() ? "free" : r.at(0, 0) == "ShareLock" ? "readers" : "mutex";
    for (std::size_t i = 0; i < r.size(); ++i)
        if (r.at(i, 1) != "t")
            return Status::error(errc::permission_denied,
                                 fmt::format("PostgreSQL did not end a holder of '{}'", name));
    return {};
}

}  // namespace deadbolt::detail
