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

std::string PgDialect::forget_ttl() const {
    return "SET idle_session_timeout = 0;";
}

std::string PgDialect::try_take(const std::vector<std::string>& keys, bool shared,
                                bool fenced) const {
    // MATERIALIZED: the try runs once, whatever the planner would inline.
    std::string take = keys.empty() ? "0"
                       : keys.size() == 1
                           ? fmt::format(
                                 "CASE WHEN pg_try_advisory_lock{}({}) "
                                 "THEN 1 ELSE 0 END",
                                 suffix(shared), keys[0])
                           : fmt::format("{}.try_locks({}, {})", schema_, array_of(keys), shared);
    return fmt::format(
        "WITH t AS MATERIALIZED (SELECT {} AS n) SELECT n, CASE WHEN n = {} THEN {} END FROM t",
        take, keys.size(), fenced ? fmt::format("nextval('{}.fences')", schema_) : "0");
}

std::string PgDialect::wait_for(const std::string& key, bool shared,
                                std::chrono::milliseconds timeout) const {
    return fmt::format("SET lock_timeout = {}; SELECT pg_advisory_lock{}({})", timeout.count(),
                       suffix(shared), key);
}

bool PgDialect::took(const SqlRows& /*answer*/) const {
    return true;  // pg_advisory_lock answers only once it holds; lock_timeout is an error
}

std::string PgDialect::give_back(const std::vector<std::string>& keys, bool shared) const {
    return fmt::format("SELECT count(*) FILTER (WHERE pg_advisory_unlock{}(k)) FROM unnest({}) k;",
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
