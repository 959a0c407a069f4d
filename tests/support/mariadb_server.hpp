// MariaDbServer: a real MariaDB server (Debian's mariadb-server) on a free port with a
// private data directory, for the MariaDB backend's tests. As root it runs as the package's
// `mysql` user. root connects over the socket without a password (admin work: sql()); the
// test user over TCP with one.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace deadbolt::test {

class MariaDbServer {
  public:
    /// The user and database the tests use: all rights on the database, none beyond.
    static constexpr const char* kUser = "deadbolt";
    static constexpr const char* kPassword = "s3cret";
    static constexpr const char* kDatabase = "deadbolt";

    /// Installs a data directory, starts the server (with server_args added to its command
    /// line), creates the test user and database. Throws std::runtime_error when the server
    /// does not start.
    explicit MariaDbServer(std::vector<std::string> server_args = {});
    ~MariaDbServer();
    MariaDbServer(const MariaDbServer&) = delete;
    MariaDbServer& operator=(const MariaDbServer&) = delete;

    /// One server per test process, for tests that leave it as they found it.
    static MariaDbServer& shared();

    std::uint16_t port() const { return port_; }
    /// mysql://deadbolt:s3cret@127.0.0.1:port/deadbolt, then suffix.
    std::string url(const std::string& suffix = "") const { return url_via(port_, suffix); }
    /// The same on another port (a proxy in front of this server).
    std::string url_via(std::uint16_t port, const std::string& suffix = "") const;
    /// Runs sql with the mariadb client as root in db: its exit status; its output (tab
    /// separated, no column names) in *out.
    int sql(const std::string& sql, std::string* out = nullptr,
            const std::string& db = kDatabase) const;
    /// The server arguments for TLS with the certificates certs.hpp wrote into dir (made
    /// readable by the server's user here): its certificate and key, the CA it checks client
    /// certificates against, and, when require, require_secure_transport (plain connections
    /// refused).
    /// sql's output as sql() gives it (empty when it failed; for reading, not for checking that
    /// a statement ran).
    std::string ask(const std::string& sql) const;
    static std::vector<std::string> tls_args(const std::string& dir, bool require);
    /// SIGKILL (or sig: SIGTERM shuts down) to the server; start() brings it back.
    void stop(int sig = 9);
    void start();

  private:
    bool ready() const;
    std::string dir_;
    std::vector<std::string> server_args_;
    std::uint16_t port_ = 0;
    pid_t pid_ = -1;
};

}  // namespace deadbolt::test
