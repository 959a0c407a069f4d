#include "mariadb_server.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "redis_server.hpp"  // free_port, run_command, spawn_logged

namespace deadbolt::test {
namespace {

bool as_root() {
    return ::getuid() == 0;
}

}  // namespace

MariaDbServer::MariaDbServer(std::vector<std::string> server_args)
    : server_args_(std::move(server_args)) {
    std::string tmpl = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm/deadbolt-mariadb-XXXXXX"
                                                       : "/tmp/deadbolt-mariadb-XXXXXX";
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed for " + tmpl);
    dir_ = tmpl;
    // The server's user writes here; its temporary files stay inside too (bootstraps running
    // side by side in one /tmp have collided).
    std::filesystem::create_directories(dir_ + "/tmp");
    std::filesystem::permissions(dir_, std::filesystem::perms::all);
    std::filesystem::permissions(dir_ + "/tmp", std::filesystem::perms::all);
    std::vector<std::string> install = {"mariadb-install-db",
                                        "--no-defaults",
                                        "--datadir=" + dir_ + "/data",
                                        "--auth-root-authentication-method=normal",
                                        "--skip-test-db",
                                        "--skip-name-resolve",
                                        "--tmpdir=" + dir_ + "/tmp"};
    if (as_root()) install.emplace_back("--user=mysql");
    std::string out;
    if (run_command(install, &out) != 0)
        throw std::runtime_error(
            "mariadb-install-db failed (is mariadb-server installed? "
            "scripts/setup.sh installs it): " +
            out);
    for (int tries = 0; tries < 3 && pid_ < 0; ++tries) {
        port_ = free_port();
        start();
    }
    if (pid_ < 0) throw std::runtime_error("mariadbd did not start: see " + dir_ + "/err.log");
    if (sql(std::string("CREATE USER '") + kUser + "'@'%' IDENTIFIED BY '" + kPassword +
                "'; CREATE DATABASE " + kDatabase + "; GRANT ALL ON " + kDatabase + ".* TO '" +
                kUser + "'@'%'",
            &out, "mysql") != 0) {
        stop(SIGKILL);
        throw std::runtime_error("could not create the test user and database: " + out);
    }
}

MariaDbServer::~MariaDbServer() {
    stop(SIGKILL);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
}

std::vector<std::string> MariaDbServer::tls_args(const std::string& dir, bool require) {
    // The server runs as `mysql` when the tests run as root; openssl wrote the keys 0600.
    namespace fs = std::filesystem;
    fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                             fs::perms::others_read | fs::perms::others_exec);
    for (const auto& e : fs::directory_iterator(dir))
        fs::permissions(e.path(), fs::perms::group_read | fs::perms::others_read,
                        fs::perm_options::add);
    std::vector<std::string> args = {"--ssl-ca=" + dir + "/ca.crt",
                                     "--ssl-cert=" + dir + "/server.crt",
                                     "--ssl-key=" + dir + "/server.key"};
    if (require) args.emplace_back("--require-secure-transport=ON");
    return args;
}

MariaDbServer& MariaDbServer::shared() {
    static MariaDbServer s;
    return s;
}

std::string MariaDbServer::url_via(std::uint16_t port, const std::string& suffix) const {
    return std::string("mysql://") + kUser + ":" + kPassword +
           "@127.0.0.1:" + std::to_string(port) + "/" + kDatabase + suffix;
}

int MariaDbServer::sql(const std::string& text, std::string* out, const std::string& db) const {
    return run_command({"mariadb", "--no-defaults", "-S", dir_ + "/sock", "-u", "root", "-N", "-B",
                        "-D", db, "-e", text},
                       out);
}

std::string MariaDbServer::ask(const std::string& text) const {
    std::string out;
    sql(text, &out);
    return out;
}

bool MariaDbServer::ready() const {
    std::string out;
    return sql("SELECT 1", &out, "mysql") == 0;
}

void MariaDbServer::start() {
    if (pid_ > 0) return;
    // Data on tmpfs where there is one: its fsyncs cost nothing, and a killed server keeps
    // every commit (the fence sequence never goes back).
    std::vector<std::string> args = {"mariadbd",
                                     "--no-defaults",
                                     "--datadir=" + dir_ + "/data",
                                     "--socket=" + dir_ + "/sock",
                                     "--port=" + std::to_string(port_),
                                     "--bind-address=127.0.0.1",
                                     "--skip-name-resolve",
                                     "--pid-file=" + dir_ + "/mariadbd.pid",
                                     "--tmpdir=" + dir_ + "/tmp",
                                     "--log-error=" + dir_ + "/err.log",
                                     "--innodb-flush-method=fsync",

                                     "--innodb-buffer-pool-size=32M",
                                     "--innodb-log-file-size=16M",
                                     "--max-connections=400",
                                     "--skip-log-bin"};
    if (as_root()) args.emplace_back("--user=mysql");
    args.insert(args.end(), server_args_.begin(), server_args_.end());
    pid_ = spawn_logged(args, dir_ + "/out.log");
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!ready()) {
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
            pid_ = -1;
            return;
        }
        if (std::chrono::steady_clock::now() > until) {
            stop(SIGKILL);
            return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

void MariaDbServer::stop(int sig) {
    if (pid_ <= 0) return;
    ::kill(pid_, sig);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
}

}  // namespace deadbolt::test
