// What a database holding is: the session that holds its locks, and their keys (one session
// per holding, so that a release frees exactly this holding); or a row with an expiry in the
// server's clock (a semaphore's permit), which outlives no TTL and needs no session.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/sql/session.hpp"
#include "core/store.hpp"

namespace deadbolt::detail {

/// What a grant was: its fence and the TTL it was taken for (how its session is marked as
/// holding it, dialect.hpp's try_take).
struct SqlGrant {
    std::uint64_t fence = 0;
    std::chrono::milliseconds ttl{0};
};

/// A lock's keys and the statement that gives them all back, worked out once by its claim
/// and shared by every holding the claim hands over.
struct SqlKeys {
    std::vector<std::string> keys;  // in the order they are taken
    std::string give_back;          // the dialect's statement releasing them all
};

struct SqlHolding final : Holding {
    using Keys = std::shared_ptr<const SqlKeys>;
    SqlHolding(std::shared_ptr<SqlSession> s, Keys k, bool sh, std::string bye = {},
               SqlGrant g = {})
        : shared(sh),
          farewell(std::move(bye)),
          grant(g),
          keys_(std::move(k)),
          session_(std::move(s)) {}

    /// The keys held on the session, in the order taken.
    const std::vector<std::string>& keys() const { return keys_->keys; }
    /// The statement that gives all of keys() back.
    const std::string& give_back() const { return keys_->give_back; }
    const bool shared = false;   // a shared lock (an RWLock's reader)
    const std::string farewell;  // ';'-ended statements a release runs first
    const SqlGrant grant;        // none ({}) for a holding never granted

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

    /// The server's id of the session a release closed without an answer (it may live on in
    /// the server, holding the keys, until the server notices), set then; 0 otherwise.
    void orphaned(std::uint64_t session_id) const {
        std::lock_guard lock(m_);
        orphan_ = session_id;
    }
    std::uint64_t orphan() const {
        std::lock_guard lock(m_);
        return orphan_;
    }
    /// The orphan was seen holding this grant after the release was sent: the holding was
    /// ours up to the release, whatever becomes of the orphan from now. Set once; never unset.
    void orphan_seen_holding() const {
        std::lock_guard lock(m_);
        orphan_held_ = true;
    }
    bool orphan_was_holding() const {
        std::lock_guard lock(m_);
        return orphan_held_;
    }

  private:
    // Shared with the claim that took them (and its other holdings): a grant copies no keys.
    const Keys keys_;
    mutable std::mutex m_;
    mutable std::shared_ptr<SqlSession> session_;
    mutable std::uint64_t orphan_ = 0;
    mutable bool orphan_held_ = false;
};

/// A holding kept as a row with an expiry: the engine's store extends, releases and checks
/// it by key and id (SqlStore::on_row).
struct SqlRow final : Holding {
    SqlRow(std::string k, std::string i) : key(std::move(k)), id(std::move(i)) {}
    const std::string key;  // the lock's key, as the dialect writes it
    const std::string id;   // the row's own: the holder's token
    // A ReentrantMutex row's grant (0: any row of id). Its owner is the same from one holding
    // to the next, so a release answered too late and sent again must touch only this grant's
    // row, not the owner's next one (a new row, a new fence).
    std::uint64_t fence = 0;
};

}  // namespace deadbolt::detail
