// LeaderElection on PostgreSQL: a campaign is the advisory lock on the election's key, so
// candidates wait in the server's FIFO queue and a leader's term ends with its session. The
// leader's row in `leaders` (its term, value, session pid and TTL) is written by the grant
// (on_grant, on the holding's own session) and deleted by its release, each with a NOTIFY to
// the election's channel. A row counts only while its session holds the lock, so a leader
// that died is never read as leading; observers listen, and wake at the leader's expiry too
// (when its silent session would be ended), since a death without successor announces
// nothing.
#include <fmt/format.h>

#include <algorithm>

#include "backends/postgres/keys.hpp"
#include "backends/postgres/listener.hpp"
#include "backends/postgres/store.hpp"
#include "core/watch.hpp"

namespace deadbolt::detail {

Status PgStore::on_grant(SqlSession& s, const LockSpec& spec, const std::string& token,
                         std::uint64_t fence, std::chrono::milliseconds keep,
                         std::string& farewell) {
    farewell.clear();
    if (spec.shape != Shape::leader) return {};
    const auto key = advisory_key(spec.name);
    std::vector<SqlRows> out;
    if (auto st = s.run(fmt::format("SELECT {}.lead({}, {}, {}, {})", schema_, key, fence,
                                    bytea_literal(spec.value), keep.count()),
                        deadline(), out);
        !st.ok())
        return st;
    farewell = fmt::format("SELECT {}.resign({}, {});", schema_, key, fence);
    std::lock_guard lock(terms_m_);
    terms_[spec.name] = {token, fence};
    return {};
}

Status PgStore::proclaim(const std::string& name, const std::string& token, std::string_view value,
                         bool& ours) {
    ours = false;
    std::uint64_t term = 0;
    {
        std::lock_guard lock(terms_m_);
        auto it = terms_.find(name);
        if (it == terms_.end() || it->second.first != token) return {};
        term = it->second.second;
    }
    std::vector<SqlRows> out;
    auto st = run_once(fmt::format("SELECT {}.proclaim({}, {}, {})", schema_, advisory_key(name),
                                   term, bytea_literal(value)),
                       out);
    ours = st.ok() && out.back().at(0, 0) == "t";
    return st;
}

namespace {

// The leader whose session holds the election's lock, and how long until its session would
// be ended for silence (its idle clock restarts at every statement: state_change).
Status read_leader(SqlStore& store, const std::string& schema, std::int64_t key, Leader& out) {
    std::vector<SqlRows> rows;
    auto st = store.run_once(
        fmt::format(
            "SELECT l.term, l.value, ceil(extract(epoch FROM coalesce(a.state_change, "
            "clock_timestamp()) + l.ttl_ms * interval '1 millisecond' - clock_timestamp()) * "
            "1000) FROM {0}.leaders l JOIN pg_locks k ON k.locktype = 'advisory' AND k.granted "
            "AND k.objsubid = 1 AND (k.classid::bigint << 32 | k.objid::bigint) = l.key AND "
            "k.pid = l.pid LEFT JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.key = {1}",
            schema, key),
        rows);
    out = Leader{};
    if (!st.ok() || rows.back().empty()) return st;
    const auto& r = rows.back();
    out.elected = true;
    out.term = std::stoull(r.at(0, 0));
    out.value = bytea_value(r.at(0, 1));
    out.ttl = std::chrono::milliseconds(std::max<long long>(0, std::stoll(r.at(0, 2))));
    return {};
}

}  // namespace

Status PgStore::leader(const std::string& name, Leader& out) {
    return read_leader(*this, schema_, advisory_key(name), out);
}

Leader PgStore::observe(const std::string& name, const Leader& seen, const AcquireOptions& how) {
    // A server ends a silent session a moment after its idle timeout: look again no sooner.
    constexpr std::chrono::milliseconds kEndingLag{100};
    const auto key = advisory_key(name);
    PgListener waker(*this, fmt::format("deadbolt_leader_{}", key), how.cancel);
    Leader now;
    auto look = [&](Look& found) {
        Status st = read_leader(*this, schema_, key, now);
        found.done = st.ok() && !now.same_as(seen);
        found.ttl = now.elected ? std::max(now.ttl, kEndingLag) : std::chrono::milliseconds(-1);
        return st;
    };
    detail::watch(*this, waker, false, look, how, std::chrono::milliseconds(0));
    return now;
}

}  // namespace deadbolt::detail
