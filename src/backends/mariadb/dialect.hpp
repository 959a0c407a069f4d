// MariaDB's session locks: GET_LOCK on a name (names.hpp). A try, its fence (the
// deadbolt_fences sequence) and the session's row in deadbolt_holders (a MEMORY table: who
// holds, with which fence and TTL, for status) go in one round trip; a wait is GET_LOCK with
// a timeout; the TTL is the session's wait_timeout, in whole seconds. MariaDB has no shared
// GET_LOCK, so an RWLock is refused.
#pragma once

#include <optional>

#include "backends/sql/dialect.hpp"
#include "core/token.hpp"

namespace deadbolt::detail {

class MyDialect final : public SqlDialect {
  public:
    /// me: the host and pid a holding's row names (none: "unknown", 0); returning: the
    /// server takes INSERT ... RETURNING (MariaDB 10.5+), so a grant is one statement.
    MyDialect(std::optional<TokenOrigin> me, bool returning);
    std::vector<std::string> keys(std::span<const std::string> names) const override;
    std::string keep(std::chrono::milliseconds ttl) const override;
    std::string try_take(const std::vector<std::string>& keys, std::size_t from, bool shared,
                         bool fenced, std::chrono::milliseconds ttl) const override;
    std::string wait_for(const std::string& key, bool shared,
                         std::chrono::milliseconds timeout) const override;
    bool took(const SqlRows& answer) const override;
    std::string give_back(const std::vector<std::string>& keys, bool shared) const override;
    std::string count_held(const std::vector<std::string>& keys) const override;

  private:
    std::string host_;  // a SQL literal
    int pid_ = 0;
    bool returning_ = false;
};

/// wait_timeout for a TTL: whole seconds, rounded up (the server keeps a lock a little longer
/// than asked, never shorter).
long long whole_seconds(std::chrono::milliseconds ttl);

}  // namespace deadbolt::detail
