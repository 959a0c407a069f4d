// PgConn: one libpq connection, i.e. one PostgreSQL session (sql/session.hpp).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "backends/postgres/url.hpp"
#include "backends/sql/session.hpp"

struct pg_conn;

namespace deadbolt::detail {

class PgConn final : public SqlSession {
  public:
    /// Connects as url says until by: the session, or why not (auth_failed, connect_failed,
    /// server_error naming a missing database, ...).
    static Status open(const PgUrl& url, Clock::time_point by, std::shared_ptr<PgConn>& out);
    ~PgConn() override;
    PgConn(const PgConn&) = delete;
    PgConn& operator=(const PgConn&) = delete;

    Status run(std::string_view sql, Clock::time_point by, std::vector<SqlRows>& out,
               int wake_fd = -1) override;
    bool alive() const override;
    void close() noexcept override;
    int socket() const override;
    bool ended_while_idle() override;

    /// Waits until a notification comes on a channel the session listens on (heard; one
    /// that came earlier counts and is taken), by passes or wake_fd (when >= 0) is readable.
    /// Fails with connection_lost when the session ended. Called with m held, no statement
    /// running.
    Status await_notice(Clock::time_point by, int wake_fd, bool& heard);

  private:
    PgConn() = default;
    pg_conn* c_ = nullptr;
    std::string where_;  // host:port/db, for messages
    std::string text_;   // the statement as a C string (used, as c_ is, by one caller at a time)
};

/// The errc for a server error's SQLSTATE.
errc errc_of_sqlstate(std::string_view sqlstate);

}  // namespace deadbolt::detail
