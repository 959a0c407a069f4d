// SqlDialect: the statements a database's session locks are taken, waited for, kept and
// given back with. A lock's keys are SQL literals the dialect made (PostgreSQL: a bigint,
// MariaDB: a quoted name), in the order they are taken. Each statement's last result's first
// row answers it. One statement where the engine allows: each costs the server a parse.
#pragma once

#include <chrono>
#include <span>
#include <string>
#include <vector>

#include "backends/sql/session.hpp"
#include "core/lock_spec.hpp"

namespace deadbolt::detail {

class SqlDialect {
  public:
    virtual ~SqlDialect() = default;
    /// The keys of a lock on names, sorted and without repeats: the order they are taken in,
    /// so that two MultiLocks never wait for each other.
    virtual std::vector<std::string> keys(std::span<const std::string> names) const = 0;
    /// Sets the session's idle timeout to ttl (the holding's TTL: the server ends a session
    /// silent for longer, and frees its locks). A statement of its own, ';'-terminated.
    virtual std::string keep(std::chrono::milliseconds ttl) const = 0;
    /// Tries keys[from, end) in order without waiting, stopping at the first refused
    /// (keys[0, from) are held already). Answers, when the session then holds all of keys, a
    /// fresh fence in column 0 (0 when !fenced), else NULL there; and when it tried several,
    /// how many it took in column 1. A session that holds any of keys afterwards is marked,
    /// in the same round trip, as held by this process for ttl with that fence, where the
    /// engine's status can read it.
    virtual std::string try_take(const std::vector<std::string>& keys, std::size_t from,
                                 bool shared, bool fenced, std::chrono::milliseconds ttl) const = 0;
    /// Waits inside the server for key for at most timeout (0: without end).
    virtual std::string wait_for(const std::string& key, bool shared,
                                 std::chrono::milliseconds timeout) const = 0;
    /// Whether wait_for's answer says it took the key (false: the timeout passed).
    virtual bool took(const SqlRows& answer) const = 0;
    /// Gives keys back; answers how many of them the session held.
    virtual std::string give_back(const std::vector<std::string>& keys, bool shared) const = 0;
    /// Answers how many of keys the session holds.
    virtual std::string count_held(const std::vector<std::string>& keys) const = 0;
};

}  // namespace deadbolt::detail
