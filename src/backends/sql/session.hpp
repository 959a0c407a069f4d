// SqlSession: one connection to a database server, i.e. one session, the thing that holds a
// database's session locks (PostgreSQL's advisory locks, MariaDB's GET_LOCK) until it lets
// go or ends. Every statement has a deadline; one whose answer does not come in time closes
// the connection, so the server ends the session and frees what it held: nothing is left
// to guess about.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.hpp"

namespace deadbolt::detail {

using Clock = std::chrono::steady_clock;

/// The rows of one statement's answer, as text (NULL = nullopt).
struct SqlRows {
    /// Row after row, columns() cells each (one allocation per answer, not one per row).
    std::vector<std::optional<std::string>> cells;
    std::size_t columns = 0;
    /// How many rows there are.
    std::size_t size() const { return columns == 0 ? 0 : cells.size() / columns; }
    bool empty() const { return size() == 0; }
    /// Row r's column c ("" when NULL or missing).
    std::string at(std::size_t r, std::size_t c) const;
    bool null(std::size_t r, std::size_t c) const;
};

/// Writes a run's answers into out, in the room of the answers out held before: a session's
/// scratch (SqlSession::answers) answers a statement like its last without allocating. When
/// it ends, whichever way run() returns, out holds exactly the answers written.
class SqlAnswers {
  public:
    explicit SqlAnswers(std::vector<SqlRows>& out) noexcept : out_(out) {}
    ~SqlAnswers() { out_.erase(out_.begin() + static_cast<std::ptrdiff_t>(n_), out_.end()); }
    SqlAnswers(const SqlAnswers&) = delete;
    SqlAnswers& operator=(const SqlAnswers&) = delete;
    /// The next answer, with no rows and `columns` columns.
    SqlRows& next(std::size_t columns);

  private:
    std::vector<SqlRows>& out_;
    std::size_t n_ = 0;
};

class SqlSession {
  public:
    virtual ~SqlSession() = default;
    /// Runs sql (one or more statements; values are formatted in as literals) until by, or
    /// until wake_fd (when >= 0) is readable: each statement's rows. A server error is its
    /// code's errc with the server's message; no answer by by (or a wake) closes the
    /// connection: unknown_outcome once anything was sent, cancelled for a wake.
    virtual Status run(std::string_view sql, Clock::time_point by, std::vector<SqlRows>& out,
                       int wake_fd = -1) = 0;
    /// False once the connection broke or was closed: it holds nothing any more. Safe from
    /// any thread (the watch reads it without m).
    virtual bool alive() const = 0;
    /// Closes the connection; the server ends the session and frees its locks. Called with m
    /// held (or by the destructor). Never throws.
    virtual void close() noexcept = 0;
    /// The connection's socket (-1 once closed), for a watch while the session is idle. Safe
    /// from any thread.
    virtual int socket() const = 0;
    /// Reads what the server sent an idle session (called with m held, no statement
    /// running): true when it ended the session (an operator, the idle timeout, a shutdown),
    /// which closes the connection. Heard before a statement is sent, that is a session lost
    /// with nothing of the statement done, not an unknown outcome (run() asks through
    /// ended_before_statement()).
    virtual bool ended_while_idle() = 0;
    /// Whether the server ended the session before a statement is sent (called by run(),
    /// with m held): heard by the watch's thread for a session it vouches for (`watched`),
    /// so that the statement costs no system call of its own; read here (ended_while_idle)
    /// for any other.
    bool ended_before_statement() { return !watched && ended_while_idle(); }

    /// Serializes statements from the holder's thread, the renewer and the watch.
    std::mutex m;
    /// The server's id of the session (PostgreSQL's backend pid, MariaDB's connection id),
    /// by which another session can find and end it.
    std::uint64_t id = 0;
    /// The idle timeout set on the session now (0: the server's default), and when it was
    /// last used: a pooled session idle past it is dead.
    std::chrono::milliseconds idle_timeout{0};
    Clock::time_point last_used{};
    /// The answers of the statements a lock's attempt or release runs (under m): reused, so
    /// that the hot path's answers cost no allocation.
    std::vector<SqlRows> answers;
    /// Whether the session holds a lock now, for the watch: its end is then a loss to tell.
    /// Set under m; cleared by a release before it takes m.
    std::atomic<bool> holds{false};
    /// Whether the watch vouches for the session (its socket is armed in the watch's set):
    /// the watch then hears the server end it, and a statement does not look first. Set
    /// under m; the watch's thread clears it when it cannot vouch any more (an end it heard
    /// while a statement ran, its own end). In the moment between the server's end and the
    /// watch's thread hearing it, a statement is sent and reports unknown_outcome, as one
    /// the server ends while it runs does.
    std::atomic<bool> watched{false};

  protected:
    /// The connection's socket while it is open; -1 once closed (alive() and socket()).
    std::atomic<int> fd_{-1};
};

/// Waits until fd is ready for reading (or writing) or by; false at by or when wake_fd
/// (when >= 0) becomes readable, which sets woken.
bool wait_socket(int fd, bool write, Clock::time_point by, int wake_fd, bool& woken);

}  // namespace deadbolt::detail
