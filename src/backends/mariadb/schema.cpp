#include "backends/mariadb/schema.hpp"

#include <fmt/format.h>

#include <vector>

namespace deadbolt::detail {
namespace {

// Every table deadbolt makes, its fenced values keyed by their key's SHA-256 (keys of any
// length and bytes). seen is invisible: an older deadbolt's INSERT of two values still fits.
constexpr std::string_view kCreation =
    "CREATE SEQUENCE IF NOT EXISTS deadbolt_fences NOCYCLE; CREATE TABLE IF NOT EXISTS "
    "deadbolt_names (lock_name VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin PRIMARY KEY, "
    "name BLOB NOT NULL) ENGINE = InnoDB; ALTER TABLE deadbolt_names ADD COLUMN IF NOT EXISTS "
    "seen DATETIME(3) INVISIBLE NOT NULL DEFAULT '2000-01-01 00:00:00', ADD INDEX IF NOT EXISTS "
    "seen (seen); CREATE TABLE IF NOT EXISTS deadbolt_fenced (key_hash BINARY(32) PRIMARY KEY, k "
    "LONGBLOB NOT NULL, value LONGBLOB, fence BIGINT UNSIGNED NOT NULL, version BIGINT UNSIGNED "
    "NOT NULL) ENGINE = InnoDB; CREATE TABLE IF NOT EXISTS deadbolt_buckets (key_hash BINARY(32) "
    "PRIMARY KEY, tokens DOUBLE NOT NULL, ts DOUBLE NOT NULL, rate BIGINT NOT NULL, per_ms BIGINT "
    "NOT NULL, burst BIGINT NOT NULL) ENGINE = InnoDB; CREATE TABLE IF NOT EXISTS "
    "deadbolt_holders (conn BIGINT UNSIGNED PRIMARY KEY, lock_name VARCHAR(64) CHARACTER SET "
    "ascii COLLATE ascii_bin NOT NULL, fence BIGINT UNSIGNED, ttl_ms BIGINT NOT NULL, since_ms "
    "BIGINT NOT NULL, pid INT NOT NULL, host VARCHAR(64) CHARACTER SET ascii NOT NULL) ENGINE = "
    "MEMORY";

// Every table and column, read from no row: the server checks they exist and that this user
// may read them (status and list need no more). Writing them is checked where a lock does it,
// and refused with the GRANTs too (MyStore::rights_advice).
constexpr std::string_view kProbe =
    "SELECT 1 FROM deadbolt_fences, deadbolt_fenced, deadbolt_buckets, deadbolt_holders WHERE "
    "FALSE; SELECT seen FROM deadbolt_names WHERE FALSE";

bool broken(const Status& st) {
    return st.ec == make_error_code(errc::connection_lost) ||
           st.ec == make_error_code(errc::unknown_outcome) ||
           st.ec == make_error_code(errc::timeout);
}

}  // namespace

std::string my_grants(const std::string& db, const std::string& user) {
    return fmt::format(
        "GRANT CREATE, ALTER, SELECT, INSERT, UPDATE, DELETE ON {0}.* TO '{1}', or have a user "
        "who may run `deadbolt init` with this URL and then GRANT SELECT, INSERT, UPDATE, DELETE "
        "ON each of {0}.deadbolt_fences, {0}.deadbolt_names, {0}.deadbolt_fenced, "
        "{0}.deadbolt_buckets and {0}.deadbolt_holders TO '{1}'",
        db, user);
}

Status ensure_my_schema(SqlSession& s, const MyUrl& url, Clock::time_point by) {
    std::vector<SqlRows> out;
    auto probe = s.run(kProbe, by, out);
    if (probe.ok() || broken(probe)) return probe;
    // Missing, of an older layout, or not this user's to use: make what is missing (IF NOT
    // EXISTS), then look again.
    auto made = s.run(kCreation, by, out);
    if (made.ok()) made = s.run(kProbe, by, out);
    if (made.ok() || broken(made)) return made;
    if (made.ec != make_error_code(errc::permission_denied)) return made;
    const auto& why = probe.ec == make_error_code(errc::permission_denied) ? probe : made;
    return Status::error(
        errc::permission_denied,
        fmt::format("deadbolt keeps its fence sequence (deadbolt_fences), the names in use "
                    "(deadbolt_names), fenced values (deadbolt_fenced), rate limiters' buckets "
                    "(deadbolt_buckets) and who holds what (deadbolt_holders) in database {0}, "
                    "and user '{1}' may not make or use them ({2}). {3}",
                    url.database, url.options.username, why.detail,
                    my_grants(url.database, url.options.username)));
}

}  // namespace deadbolt::detail
