// PgConn: one libpq connection (one PostgreSQL session) and every statement this backend
// runs on it, each with a deadline. A session holds advisory locks until it unlocks them or
// ends, so a statement whose answer does not come in time closes the connection: the server
// ends the session and frees what it held, and nothing is left to guess about.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/postgres/url.hpp"
#include "core/status.hpp"

struct pg_conn;

namespace deadbolt::detail {

using Clock = std::chrono::steady_clock;

/// The rows of one statement's answer, as text (NULL = nullopt).
struct PgRows {
    std::vector<std::vector<std::optional<std::string>>> rows;
    /// Row r's column c ("" when NULL or missing).
    std::string at(std::size_t r, std::size_t c) const;
    bool null(std::size_t r, std::size_t c) const;
};

class PgConn {
  public:
    /// Connects as url says until by: the session, or why not (auth_failed, connect_failed,
    /// server_error naming a missing database, ...).
    static Status open(const PgUrl& url, Clock::time_point by, std::shared_ptr<PgConn>& out);
    ~PgConn();
    PgConn(const PgConn&) = delete;
    PgConn& operator=(const PgConn&) = delete;

    /// Runs sql (one or more statements, no parameters: values are formatted in as literals)
    /// until by, or until wake_fd (when >= 0) is readable: each statement's rows. A server
    /// error is its code's errc with the server's message and sqlstate() set; no answer by
    /// by (or a wake) closes the connection: unknown_outcome once anything was sent.
    Status run(std::string_view sql, Clock::time_point by, std::vector<PgRows>& out,
               int wake_fd = -1);
    /// The SQLSTATE of the last server error ("" when the last statement succeeded).
    const std::string& sqlstate() const { return sqlstate_; }
    /// False once the connection broke or was closed: it holds nothing any more.
    bool alive() const;
    /// Closes the connection; the server ends the session and frees its locks.
    void close() noexcept;
    /// The server's process id for this session (pg_locks.pid).
    int backend_pid() const { return pid_; }

    /// Serializes statements from the holder's thread and the renewer.
    std::mutex m;
    /// The idle timeout set on the session now (0: none), and when it was last used: a
    /// pooled connection idle past it is dead.
    std::chrono::milliseconds idle_timeout{0};
    Clock::time_point last_used{};

  private:
    PgConn() = default;
    // Waits until the socket is ready for reading (or writing) or by; false at by or a wake.
    bool wait_socket(bool write, Clock::time_point by, int wake_fd, bool& woken) const;
    pg_conn* c_ = nullptr;
    std::string sqlstate_;
    std::string where_;  // host:port/db, for messages
    int pid_ = 0;
};

/// The errc for a server error's SQLSTATE.
errc errc_of_sqlstate(std::string_view sqlstate);

}  // namespace deadbolt::detail
