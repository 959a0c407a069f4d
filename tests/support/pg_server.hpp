// PgServer: a real PostgreSQL server (Debian's postgresql) on a free port with a private
// socket directory, for the PostgreSQL backend's tests. initdb refuses root, so as root the
// server runs as the package's `postgres` user. The superuser `postgres` connects over the
// socket without a password (admin work: psql()); TCP needs a password.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>

namespace deadbolt::test {

class PgServer {
  public:
    /// The role and database the tests use: owner of the database, not a superuser.
    static constexpr const char* kUser = "deadbolt";
    static constexpr const char* kPassword = "s3cret";
    static constexpr const char* kDatabase = "deadbolt";

    /// initdb, start, create the test role and database. Throws std::runtime_error when the
    /// server does not start.
    PgServer();
    ~PgServer();
    PgServer(const PgServer&) = delete;
    PgServer& operator=(const PgServer&) = delete;

    /// One server per test process, for tests that leave it as they found it.
    static PgServer& shared();

    std::uint16_t port() const { return port_; }
    /// postgresql://deadbolt:s3cret@127.0.0.1:port/deadbolt, then suffix (e.g. "?schema=x").
    std::string url(const std::string& suffix = "") const;
    /// The same on another port (a proxy in front of this server).
    std::string url_via(std::uint16_t port, const std::string& suffix = "") const;
    /// Runs sql with psql as the superuser in db: its exit status; its output (unaligned,
    /// tuples only) in *out.
    int psql(const std::string& sql, std::string* out = nullptr,
             const std::string& db = kDatabase) const;
    /// SIGKILL (or sig: SIGINT is a fast shutdown) to the server; start() brings it back.
    void stop(int sig = 9);
    void start();

  private:
    bool ready() const;
    std::string dir_, bin_;
    std::uint16_t port_ = 0;
    pid_t pid_ = -1;
    uid_t uid_ = 0;  // whom the server runs as
    gid_t gid_ = 0;
};

/// For "a waiter runs no statement while it waits": once sql's answer (a look at
/// pg_stat_activity) starts with prefix, the answer then and the answer `later` after it;
/// they differ when a session it shows ran a statement meanwhile. first is empty when the
/// prefix never came.
struct Quiet {
    std::string first, then;
};
Quiet quiet_over(const PgServer& pg, const std::string& sql, const std::string& prefix,
                 std::chrono::milliseconds later);

}  // namespace deadbolt::test
