// PostgreSQL's session locks: advisory locks on a name's 64-bit key (keys.hpp). A try draws
// its fence from the schema's sequence in the same statement; a wait is pg_advisory_lock
// under a lock_timeout local to the wait; the TTL is idle_session_timeout (PostgreSQL 14+).
#pragma once

#include <string>

#include "backends/sql/dialect.hpp"

namespace deadbolt::detail {

class PgDialect final : public SqlDialect {
  public:
    explicit PgDialect(std::string schema) : schema_(std::move(schema)) {}
    std::vector<std::string> keys(const std::vector<std::string>& names) const override;
    std::string keep(std::chrono::milliseconds ttl) const override;
    std::string try_take(const std::vector<std::string>& keys, bool shared,
                         bool fenced) const override;
    std::string wait_for(const std::string& key, bool shared,
                         std::chrono::milliseconds timeout) const override;
    bool took(const SqlRows& answer) const override;
    std::string give_back(const std::vector<std::string>& keys, bool shared) const override;
    std::string count_held(const std::vector<std::string>& keys) const override;

  private:
    const std::string schema_;
};

}  // namespace deadbolt::detail
