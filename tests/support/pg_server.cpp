#include "pg_server.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <thread>
#include <vector>

#include "eventually.hpp"
#include "redis_server.hpp"  // free_port, run_command

namespace deadbolt::test {
namespace {

// The newest server Debian installed: /usr/lib/postgresql/<major>/bin.
std::string server_bin() {
    std::string best;
    int major = -1;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/usr/lib/postgresql", ec)) {
        auto bin = e.path() / "bin";
        if (!std::filesystem::exists(bin / "postgres")) continue;
        int m = std::atoi(e.path().filename().c_str());
        if (m > major) major = m, best = bin.string();
    }
    if (best.empty())
        throw std::runtime_error(
            "no PostgreSQL server under /usr/lib/postgresql: run scripts/setup.sh "
            "(it installs Debian's postgresql)");
    return best;
}

// Runs argv as uid/gid with output appended to log: its pid (waited for when wait is set,
// then its exit status).
pid_t spawn_as(uid_t uid, gid_t gid, std::vector<std::string> argv, const std::string& log,
               bool wait) {
    std::vector<char*> a;  // before the fork: the child may not allocate (spawn_logged)
    for (auto& s : argv) a.push_back(s.data());
    a.push_back(nullptr);
    pid_t pid = ::fork();
    if (pid == 0) {
        int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        ::dup2(out, 1);
        ::dup2(out, 2);
        ::setpgid(0, 0);  // the server and its backends: one group, killed at once
        if (::getuid() == 0 && (::setgid(gid) != 0 || ::setuid(uid) != 0)) ::_exit(126);
        ::execv(a[0], a.data());
        ::_exit(127);
    }
    if (!wait) return pid;
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

PgServer::PgServer() : bin_(server_bin()) {
    uid_ = ::getuid();
    gid_ = ::getgid();
    if (uid_ == 0) {  // initdb and postgres refuse root: the package's user runs them
        const passwd* pw = ::getpwnam("postgres");
        if (!pw) throw std::runtime_error("running as root, but there is no 'postgres' user");
        uid_ = pw->pw_uid;
        gid_ = pw->pw_gid;
    }
    std::string tmpl =
        ::access("/dev/shm", W_OK) == 0 ? "/dev/shm/deadbolt-pg-XXXXXX" : "/tmp/deadbolt-pg-XXXXXX";
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed for " + tmpl);
    dir_ = tmpl;
    if (::chown(dir_.c_str(), uid_, gid_) != 0)
        throw std::runtime_error("cannot give " + dir_ + " to the server's user");
    auto pwfile = dir_ + "/pw";
    spawn_as(uid_, gid_, {"/bin/sh", "-c", "echo postgres > " + pwfile}, dir_ + "/init.log", true);
    if (spawn_as(uid_, gid_,
                 {bin_ + "/initdb", "-D", dir_ + "/data", "-U", "postgres", "--pwfile=" + pwfile,
                  "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C",
                  "--no-sync"},
                 dir_ + "/init.log", true) != 0)
        throw std::runtime_error("initdb failed: see " + dir_ + "/init.log");
    // A port found free may be taken before the server binds it: fresh ports, a few times.
    for (int tries = 0; tries < 3 && pid_ < 0; ++tries) {
        port_ = free_port();
        start();
        if (pid_ < 0) continue;
    }
    if (pid_ < 0) throw std::runtime_error("postgres did not start: see " + dir_ + "/pg.log");
    std::string out;
    if (psql(std::string("CREATE ROLE ") + kUser + " LOGIN PASSWORD '" + kPassword + "'", &out,
             "postgres") != 0 ||
        psql(std::string("CREATE DATABASE ") + kDatabase + " OWNER " + kUser, &out, "postgres") !=
            0) {
        stop(SIGKILL);
        throw std::runtime_error("could not create the test role and database: " + out);
    }
}

PgServer::~PgServer() {
    stop(SIGKILL);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
}

PgServer& PgServer::shared() {
    static PgServer s;
    return s;
}

std::string PgServer::url(const std::string& suffix) const {
    return url_via(port_, suffix);
}

std::string PgServer::url_via(std::uint16_t port, const std::string& suffix) const {
    return std::string("postgresql://") + kUser + ":" + kPassword +
           "@127.0.0.1:" + std::to_string(port) + "/" + kDatabase + suffix;
}

int PgServer::psql(const std::string& sql, std::string* out, const std::string& db) const {
    return run_command({bin_ + "/psql", "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1", "-h", dir_,
                        "-p", std::to_string(port_), "-U", "postgres", "-d", db, "-c", sql},
                       out);
}

bool PgServer::ready() const {
    std::string out;
    return psql("SELECT 1", &out, "postgres") == 0;
}

void PgServer::start() {
    if (pid_ > 0) return;
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    // A postmaster started right after a SIGKILL may find the old one's shared memory or
    // port not yet given back by a loaded machine and exit at once: it is started again
    // (seen under the sanitizers at -j3), until the deadline.
    while (std::chrono::steady_clock::now() < until) {
        // fsync off: the tests' data is thrown away, and disks here are slow and shared.
        pid_ = spawn_as(uid_, gid_,
                        {bin_ + "/postgres", "-D", dir_ + "/data", "-p", std::to_string(port_),
                         "-k", dir_, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c",
                         "full_page_writes=off", "-c", "max_connections=400", "-c",
                         "shared_buffers=32MB", "-c", "deadlock_timeout=200ms"},
                        dir_ + "/pg.log", false);
        for (;;) {
            if (ready()) return;
            int status = 0;
            if (::waitpid(pid_, &status, WNOHANG) == pid_) break;  // it exited: start again
            if (std::chrono::steady_clock::now() > until) return stop(SIGKILL);
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        pid_ = -1;
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
}

void PgServer::stop(int sig) {
    if (pid_ <= 0) return;
    // SIGKILL goes to the backends too: a postmaster killed alone leaves them holding its
    // shared memory for a moment, and the next start refuses to run beside them.
    ::kill(sig == SIGKILL ? -pid_ : pid_, sig);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    for (int i = 0; i < 200 && ::kill(-pid_, 0) == 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
    pid_ = -1;
}

Quiet quiet_over(const PgServer& pg, const std::string& sql, const std::string& prefix,
                 std::chrono::milliseconds later) {
    auto answer = [&] {
        std::string out;
        pg.psql(sql, &out);
        return out;
    };
    Quiet q;
    if (!eventually([&] { return answer().starts_with(prefix); })) return q;
    q.first = answer();
    std::this_thread::sleep_for(later);
    q.then = answer();
    return q;
}

}  // namespace deadbolt::test
