// MyConn: one connection through MariaDB's Connector/C in its non-blocking mode, i.e. one
// MariaDB session (sql/session.hpp), so that every statement keeps its deadline.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "backends/mariadb/url.hpp"
#include "backends/sql/session.hpp"

struct st_mysql;

namespace deadbolt::detail {

class MyConn final : public SqlSession {
  public:
    /// Connects as url says until by, over TLS when it asks (the server's certificate checked
    /// against its CA and its host unless verify=0): the session, or why not (auth_failed,
    /// connect_failed naming a certificate problem or a server that requires TLS,
    /// server_error naming a missing database, ...).
    static Status open(const MyUrl& url, Clock::time_point by, std::shared_ptr<MyConn>& out);
    ~MyConn() override;
    MyConn(const MyConn&) = delete;
    MyConn& operator=(const MyConn&) = delete;

    Status run(std::string_view sql, Clock::time_point by, std::vector<SqlRows>& out,
               int wake_fd = -1) override;
    bool alive() const override { return fd_.load() >= 0; }
    void close() noexcept override;
    int socket() const override;
    bool ended_while_idle() override;
    /// The server's version as major * 10000 + minor * 100 + patch (100500: MariaDB 10.5.0).
    unsigned long server_version() const { return version_; }

  private:
    MyConn() = default;
    // Connects as url says until by, with TLS when tls (verified as the URL says, or not at
    // all for a probe of a URL without TLS): 1 connected, 2 refused (mysql_errno says why),
    // 0 no answer in time, -1 no memory.
    int drive_connect(const MyUrl& url, bool tls, Clock::time_point by);
    // Waits for what a non-blocking call asked (status: MYSQL_WAIT_*) until by or a wake:
    // the events to continue it with, or 0 when time ran out (woken: a wake).
    int await(int status, Clock::time_point by, int wake_fd, bool& woken) const;
    // The server's last error as a Status (and the connection closed when it ended the session).
    Status error(bool sent);

    st_mysql* db_ = nullptr;
    std::string where_;          // host:port/db, for messages
    unsigned long version_ = 0;  // the server's
};

/// The errc for a server or client error number.
errc errc_of_mysql(unsigned number);

}  // namespace deadbolt::detail
