#include "backends/postgres/dialect.hpp"

#include <fmt/format.h>

#include <charconv>

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

PgDialect::PgDialect(std::string schema, std::optional<TokenOrigin> me)
    : schema_(std::move(schema)), me_(std::move(me)) {
    auto host = me_ ? me_->host : std::string("unknown");
    std::erase_if(host, [](char c) { return c == '\'' || c == '\\'; });
    origin_ = fmt::format("'{}', {}, ", host, me_ ? me_->pid : 0);
}

std::vector<std::string> PgDialect::keys(std::span<const std::string> names) const {
    std::vector<std::string> out;
    if (names.size() == 1) {  // most locks': no list to sort
        out.push_back(std::to_string(advisory_key(names[0])));
        return out;
    }
    for (auto k : sorted_keys(names)) out.push_back(std::to_string(k));
    return out;
}

std::string PgDialect::keep(std::chrono::milliseconds ttl) const {
    return "SET idle_session_timeout = " + std::to_string(ttl.count()) + ";";
}

std::string PgDialect::try_take(const std::vector<std::string>& keys, std::size_t from, bool shared,
                                bool fenced, std::chrono::milliseconds ttl) const {
    // The schema's functions try, draw the fence and name the holding in application_name
    // (schema.cpp's take1 and take): PL/pgSQL plans once per session, where the same SQL
    // inline is parsed and planned again by every try. Built by appending: it is every try's.
    std::string sql;
    sql.reserve(96 + schema_.size() + origin_.size() + keys.size() * 21);
    bool one = from == keys.size() || (from == 0 && keys.size() == 1);
    sql += one ? "SELECT " : "SELECT * FROM ";
    sql += schema_;
    if (one) {
        sql += ".take1(";
        sql += from == keys.size() ? std::string_view("NULL") : std::string_view(keys[0]);
    } else {
        sql += ".take(";
        sql += array_of(keys);
        sql += ", ";
        sql += std::to_string(from);
    }
    sql += shared ? ", true, " : ", false, ";
    sql += fenced ? "true, " : "false, ";
    sql += origin_;
    sql += std::to_string(ttl.count());
    sql += ')';
    return sql;
}

std::string PgDialect::holding_like(std::uint64_t fence, std::chrono::milliseconds ttl) const {
    // The host is matched by '%': the label cut it to fit.
    return fmt::format("deadbolt %:{} {} {}", me_ ? me_->pid : 0, fence, ttl.count());
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
    if (keys.size() == 1) {  // every release's: appended into one allocation
        std::string sql;
        sql.reserve(64);
        sql.append("SELECT pg_advisory_unlock").append(suffix(shared)).append("(");
        return sql.append(keys[0]).append(")::int");
    }
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

std::optional<PgLabel> parse_pg_label(std::string_view name) {
    constexpr std::string_view kOurs = "deadbolt ";
    if (!name.starts_with(kOurs)) return std::nullopt;
    std::vector<std::string_view> words;
    for (auto rest = name.substr(kOurs.size()); !rest.empty();) {
        auto space = rest.find(' ');
        words.push_back(rest.substr(0, space));
        rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
    }
    auto number = [](std::string_view w, auto& out) {
        auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), out);
        return ec == std::errc() && end == w.data() + w.size();
    };
    PgLabel l;
    auto colon = words.empty() ? std::string_view::npos : words[0].rfind(':');
    if (colon == std::string_view::npos || colon == 0 || !number(words[0].substr(colon + 1), l.pid))
        return std::nullopt;
    l.host = std::string(words[0].substr(0, colon));
    if (words.size() < 3) return l;  // a session that has held nothing yet
    std::uint64_t fence = 0;
    long long ttl = 0;
    if ((words[1] != "-" && !number(words[1], fence)) || !number(words[2], ttl)) return l;
    l.holding = true;
    if (words[1] != "-") l.fence = fence;
    l.ttl = std::chrono::milliseconds(ttl);
    return l;
}

}  // namespace deadbolt::detail
