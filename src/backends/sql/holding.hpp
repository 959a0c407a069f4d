// What a database holding is: the session that holds its locks, and their keys. One session
// per holding, so that a release frees exactly this holding.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/sql/session.hpp"
#include "core/store.hpp"

namespace deadbolt::detail {

struct SqlHolding final : Holding {
    SqlHolding(std::shared_ptr<SqlSession> s, std::vector<std::string> k, bool sh)
        : keys(std::move(k)), shared(sh), session_(std::move(s)) {}

    const std::vector<std::string> keys;  // held on the session, in the order taken
    const bool shared = false;            // a shared lock (an RWLock's reader)

    /// The session, while the holding has it (null once released or found dead).
    std::shared_ptr<SqlSession> session() const {
        std::lock_guard lock(m_);
        return session_;
    }
    /// Takes the session away, so that nothing runs on it for this holding again (it goes
    /// back to the pool or is closed).
    std::shared_ptr<SqlSession> take() const {
        std::lock_guard lock(m_);
        return std::move(session_);
    }

  private:
    mutable std::mutex m_;
    mutable std::shared_ptr<SqlSession> session_;
};

}  // namespace deadbolt::detail
