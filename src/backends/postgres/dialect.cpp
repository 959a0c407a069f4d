#include "backends/postgres/dialect.hpp"

#include <fmt/format.h>

#include "backends/postgres/keys.hpp"

namespace deadbolt::detail {
namespace {

std::string array_of(const std::vector<std::string>& keys) {
    return fmt::format("'{{{}}}'::bigint[]", fmt::join(keys, ","));
}

const char* suffix(bool shared) {
    return shared ? "_shared" : "";
}

}  // namespace

std::vector<std::string> PgDialect::keys(const std::vector<std::string>& names) const {
    std::vector<std::string> out;
    for (auto k : sorted_keys(names)) out.push_back(std::to_string(k));
    return out;
}

std::string PgDialect::keep(std::chrono::milliseconds ttl) const {
    return fmt::format("SET idle_session_timeout = {};", ttl.count());
}

std::string PgDialect::try_take(const std::vector<std::string>& keys, bool shared,
                                bool fenced) const {
    auto fence = fenced ? fmt::format("nextval('{}.fences')", schema_) : std::string("0");
    if (keys.empty()) return "SELECT " + fence;
    if (keys.size() == 1)
        return fmt::format("SELECT CASE WHEN pg_try_advisory_lock{}({}) THEN {} END",
                           suffix(shared), keys[0], fence);
    // In FROM, the try runs once, whatever the select list says.
    return fmt::format("SELECT CASE WHEN n = {} THEN {} END, n FROM {}.try_locks({}, {}) n",
                       keys.size(), fence, schema_, array_of(keys), shared);
}

std::string PgDialect::wait_for(const std::string& key, bool shared,
                                std::chrono::milliseconds timeout) const {
    // The timeout holds for this statement only (set_config's is_local): a SET would stay on
    // the session after a wait that got the lock, and cut short the row locks of whatever
    // runs on it next (a fenced write). The subquery in FROM runs first.
    return fmt::format(
        "SELECT pg_advisory_lock{}({}) FROM (SELECT set_config('lock_timeout', '{}', true)) t",
        suffix(shared), key, timeout.count());
}

bool PgDialect::took(const SqlRows& /*answer*/) const {
    return true;  // pg_advisory_lock answers only once it holds; lock_timeout is an error
}

std::string PgDialect::give_back(const std::vector<std::string>& keys, bool shared) const {
    if (keys.size() == 1)
        return fmt::format("SELECT pg_advisory_unlock{}({})::int", suffix(shared), keys[0]);
    return fmt::format("SELECT count(*) FILTER (WHERE pg_advisory_unlock{}(k)) FROM unnest({}) k",
                       suffix(shared), array_of(keys));
}

std::string PgDialect::count_held(const std::vector<std::string>& keys) const {
    return fmt::format(
        "SELECT count(*) FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = "
        "'advisory' AND granted AND objsubid = 1 AND (classid::bigint << 32 | "
        "objid::bigint) = ANY({})",
        array_of(keys));
}

}  // namespace deadbolt::detail
