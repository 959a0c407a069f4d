// What a PostgreSQL holding is: the session (connection) that holds its advisory locks, and
// their keys. One connection per holding, so that a release frees exactly this holding.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "backends/postgres/conn.hpp"
#include "core/store.hpp"

namespace deadbolt::detail {

struct PgHolding final : Holding {
    PgHolding(std::shared_ptr<PgConn> c, std::vector<std::int64_t> k, bool s)
        : keys(std::move(k)), shared(s), conn_(std::move(c)) {}

    const std::vector<std::int64_t> keys;  // held on the session, sorted
    const bool shared = false;             // pg_advisory_lock_shared (an RWLock's reader)

    /// The session, while the holding has it (null once released or found dead).
    std::shared_ptr<PgConn> conn() const {
        std::lock_guard lock(m_);
        return conn_;
    }
    /// Takes the session away, so that nothing runs on it for this holding again (it goes
    /// back to the pool or is closed).
    std::shared_ptr<PgConn> take() const {
        std::lock_guard lock(m_);
        return std::move(conn_);
    }

  private:
    mutable std::mutex m_;
    mutable std::shared_ptr<PgConn> conn_;
};

}  // namespace deadbolt::detail
