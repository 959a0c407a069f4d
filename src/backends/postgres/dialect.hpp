// PostgreSQL's session locks: advisory locks on a name's 64-bit key (keys.hpp). A try draws
// its fence from the schema's sequence in the same statement, and names the holding in the
// session's application_name ("deadbolt <host>:<pid> <fence> <ttl_ms>", which
// pg_stat_activity shows everyone: status reads it, no row is written), through the schema's
// functions take1 and take; a wait is pg_advisory_lock under a lock_timeout local to the
// wait; the TTL is idle_session_timeout (PostgreSQL 14+).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "backends/sql/dialect.hpp"
#include "core/token.hpp"

namespace deadbolt::detail {

class PgDialect final : public SqlDialect {
  public:
    /// me: the host and pid a holding's application_name names (none: "deadbolt" alone).
    PgDialect(std::string schema, std::optional<TokenOrigin> me);
    std::vector<std::string> keys(std::span<const std::string> names) const override;
    std::string keep(std::chrono::milliseconds ttl) const override;
    std::string try_take(const std::vector<std::string>& keys, std::size_t from, bool shared,
                         bool fenced, std::chrono::milliseconds ttl) const override;
    std::string wait_for(const std::string& key, bool shared,
                         std::chrono::milliseconds timeout) const override;
    bool took(const SqlRows& answer) const override;
    /// A LIKE pattern that matches the application_name of this process's session holding
    /// a grant of fence for ttl (and no other holding's but a reader's of the same TTL).
    std::string holding_like(std::uint64_t fence, std::chrono::milliseconds ttl) const;
    std::string give_back(const std::vector<std::string>& keys, bool shared) const override;
    std::string count_held(const std::vector<std::string>& keys) const override;

  private:
    const std::string schema_;
    const std::optional<TokenOrigin> me_;
    // take1's and take's arguments after the flags, host to TTL's comma: "'host', pid, ".
    // Every try sends them, so they are made once.
    std::string origin_;
};

/// What a deadbolt session's application_name says: its host and pid, and while it holds (or
/// is taking) a lock, the holding's fence (0 for a reader, nullopt while a MultiLock takes its
/// names) and TTL. Nothing for another client's name.
struct PgLabel {
    std::string host;
    int pid = 0;
    bool holding = false;
    std::optional<std::uint64_t> fence;
    std::chrono::milliseconds ttl{0};
};
std::optional<PgLabel> parse_pg_label(std::string_view application_name);

}  // namespace deadbolt::detail
