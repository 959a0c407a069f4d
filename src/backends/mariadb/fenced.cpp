// Fenced values on MariaDB: deadbolt_fenced holds each key's value, the highest fence that
// wrote it and its version. A write is one transaction in one round trip: the row is made
// (empty) when missing, locked, and changed only when the fence is not older and (when asked)
// the version did not move. The row is locked exclusively from the start (ON DUPLICATE KEY
// UPDATE): INSERT IGNORE's shared lock, upgraded by two writers at once, deadlocks. Users'
// own tables follow the same rule in their UPDATE (README, "Databases").
#include <fmt/format.h>

#include "backends/mariadb/names.hpp"
#include "backends/mariadb/store.hpp"

namespace deadbolt::detail {

Status MyStore::fenced_get(std::string_view key, FencedValue& out) {
    std::vector<SqlRows> rows;
    auto st = run_once(fmt::format("SELECT value, version FROM deadbolt_fenced WHERE key_hash = {}",
                                   hash_expression(key)),
                       rows);
    if (!st.ok()) return st;
    out = {};
    if (rows.back().empty()) return {};
    if (!rows.back().null(0, 0)) out.value = rows.back().at(0, 0);
    out.version = std::stoull(rows.back().at(0, 1));
    return {};
}

Status MyStore::fenced_write(std::string_view key, std::string_view value, std::uint64_t fence,
                             std::string_view version, FencedResult& out) {
    std::string expected = "NULL";
    if (!version.empty()) {
        if (version.find_first_not_of("0123456789") != std::string_view::npos ||
            version.size() > 19)
            return Status::error(
                errc::invalid_argument,
                fmt::format("version '{}' is not a version fenced_get returned", version));
        expected = std::string(version);
    }
    auto h = hash_expression(key);
    auto sql = fmt::format(
        "START TRANSACTION; INSERT INTO deadbolt_fenced VALUES ({0}, {1}, NULL, 0, 0) ON "
        "DUPLICATE KEY UPDATE key_hash = key_hash; "
        "SELECT fence, version INTO @deadbolt_f, @deadbolt_v FROM deadbolt_fenced WHERE "
        "key_hash = {0} FOR UPDATE; SET @deadbolt_ok = @deadbolt_f <= {3} AND ({4} IS NULL OR "
        "@deadbolt_v = {4}); UPDATE deadbolt_fenced SET value = {2}, fence = {3}, version = "
        "version + 1 WHERE key_hash = {0} AND @deadbolt_ok; COMMIT; SELECT @deadbolt_ok, "
        "IF(@deadbolt_ok, {3}, @deadbolt_f), IF(@deadbolt_ok, @deadbolt_v + 1, @deadbolt_v)",
        h, hex_literal(key), hex_literal(value), fence, expected);
    std::vector<SqlRows> rows;
    if (auto st = run_once(sql, rows); !st.ok()) return st;
    const auto& r = rows.back();
    out.accepted = r.at(0, 0) == "1";
    out.highest = std::stoull(r.at(0, 1));
    out.version = std::stoull(r.at(0, 2));
    out.stale_fence = !out.accepted && out.highest > fence;
    return {};
}

}  // namespace deadbolt::detail
