#include "redis_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace deadbolt::test {
namespace {

// The environment with entries ("NAME=value") replacing those of the same names, as execvpe
// takes it (pointing into entries and environ).
std::vector<char*> environment_with(const std::vector<std::string>& entries) {
    std::vector<char*> env;
    for (const auto& x : entries) env.push_back(const_cast<char*>(x.c_str()));
    for (char** e = environ; *e != nullptr; ++e) {
        std::string_view entry(*e);
        bool replaced = false;
        for (const auto& x : entries) {
            auto eq = x.find('=');
            replaced =
                replaced || (eq != std::string::npos && entry.starts_with(x.substr(0, eq + 1)));
        }
        if (!replaced) env.push_back(*e);
    }
    env.push_back(nullptr);
    return env;
}

RawReply convert(const redisReply* r) {
    RawReply o;
    switch (r->type) {
        case REDIS_REPLY_STRING:
            o.type = RawReply::string_t;
            o.str.assign(r->str, r->len);
            break;
        case REDIS_REPLY_STATUS:
            o.type = RawReply::status_t;
            o.str.assign(r->str, r->len);
            break;
        case REDIS_REPLY_ERROR:
            o.type = RawReply::error_t;
            o.str.assign(r->str, r->len);
            break;
        case REDIS_REPLY_INTEGER:
            o.type = RawReply::integer_t;
            o.integer = r->integer;
            break;
        case REDIS_REPLY_ARRAY:
            o.type = RawReply::array_t;
            for (size_t i = 0; i < r->elements; ++i) o.elements.push_back(convert(r->element[i]));
            break;
        default:
            o.type = RawReply::nil;
    }
    return o;
}

}  // namespace

Raw::Raw(const std::string& host, std::uint16_t port, const std::string& password) {
    timeval tv{5, 0};
    c_ = redisConnectWithTimeout(host.c_str(), port, tv);
    if (!c_ || c_->err) {
        if (c_) redisFree(c_);  // the constructor throws: no destructor will
        c_ = nullptr;
        throw std::runtime_error("test Raw: cannot connect to redis");
    }
    redisSetTimeout(c_, tv);
    if (!password.empty()) cmd({"AUTH", password});
}

Raw::~Raw() {
    if (c_) redisFree(c_);
}

RawReply Raw::cmd(const std::vector<std::string>& argv) {
    std::vector<const char*> p;
    std::vector<size_t> l;
    for (auto& a : argv) {
        p.push_back(a.data());
        l.push_back(a.size());
    }
    auto* r = static_cast<redisReply*>(redisCommandArgv(c_, int(argv.size()), p.data(), l.data()));
    if (!r) throw std::runtime_error("test Raw: connection error");
    RawReply out = convert(r);
    freeReplyObject(r);
    return out;
}

long long Raw::calls(const std::string& name) {
    auto info = cmd({"INFO", "commandstats"}).str;
    auto key = "cmdstat_" + name + ":calls=";
    auto pos = info.find(key);
    if (pos == std::string::npos) return 0;
    return std::atoll(info.c_str() + pos + key.size());
}

long long Raw::client_commands() {
    long long n = 0;
    for (const char* c : {"evalsha", "eval", "subscribe", "unsubscribe", "ping"}) n += calls(c);
    return n;
}

long long Raw::stat(const std::string& field) {
    auto info = cmd({"INFO", "all"}).str;
    auto pos = info.find("\n" + field + ":");
    if (pos == std::string::npos) return -1;
    return std::atoll(info.c_str() + pos + field.size() + 2);
}

std::uint16_t free_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t len = sizeof a;
    bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
              ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
    ::close(fd);
    if (!ok) throw std::runtime_error("free_port: cannot bind a socket on 127.0.0.1");
    return ntohs(a.sin_port);
}

std::string self_dir() {
    return std::filesystem::canonical("/proc/self/exe").parent_path().string();
}

RedisServer::RedisServer(std::vector<std::string> extra_args, std::vector<std::string> env)
    : extra_(std::move(extra_args)), env_(std::move(env)) {
    make_dir();
    port_ = free_port();
    start();
}

void RedisServer::make_dir() {
    char tmpl[] = "/tmp/deadbolt-test-XXXXXX";
    if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
}

RedisServer::RedisServer(SentinelTag, const std::string& sentinel_conf) : extra_{"--sentinel"} {
    make_dir();
    conf_ = dir_ + "/sentinel.conf";
    {
        std::ofstream out(conf_);
        out << sentinel_conf;
    }
    port_ = free_port();
    start();
}

std::unique_ptr<RedisServer> RedisServer::sentinel(const std::string& sentinel_conf) {
    return std::unique_ptr<RedisServer>(new RedisServer(SentinelTag{}, sentinel_conf));
}

RedisServer::~RedisServer() {
    stop();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
}

void RedisServer::start() {
    for (int attempt = 0; attempt < 5; ++attempt) {
        std::vector<std::string> args = {
            "redis-server", "--port",    std::to_string(port_), "--bind",      "127.0.0.1",
            "--save",       "",          "--appendonly",        "no",          "--dir",
            dir_,           "--logfile", dir_ + "/redis.log",   "--daemonize", "no"};
        args.insert(args.end(), extra_.begin(), extra_.end());
        if (!conf_.empty()) args.insert(args.begin() + 1, conf_);
        // Before the fork: the child may not allocate (spawn_logged).
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        auto envp = environment_with(env_);
        pid_ = ::fork();
        if (pid_ == 0) {
            int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
            ::dup2(devnull, 0);
            ::dup2(devnull, 1);
            ::execvpe("redis-server", argv.data(), envp.data());
            ::_exit(127);
        }
        auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (std::chrono::steady_clock::now() < until) {
            int status = 0;
            if (::waitpid(pid_, &status, WNOHANG) == pid_) {
                pid_ = -1;
                break;  // died (port taken?): try another port
            }
            timeval tv{0, 200000};
            redisContext* c = redisConnectWithTimeout("127.0.0.1", port_, tv);
            bool up = false;
            if (c && !c->err) {
                // Any reply (even NOAUTH from a password-protected server) means it is up.
                auto* r = static_cast<redisReply*>(redisCommand(c, "PING"));
                up = r != nullptr;
                if (r) freeReplyObject(r);
            }
            if (c) redisFree(c);
            if (up) return;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        stop();
        port_ = free_port();
    }
    throw std::runtime_error("could not start redis-server (is it installed?)");
}

void RedisServer::stop(int sig) {
    if (pid_ <= 0) return;
    // SIGKILL also ends a stopped process; anything else needs it running (and a paused
    // server must not get to answer before it dies).
    if (sig != SIGKILL) ::kill(pid_, SIGCONT);
    ::kill(pid_, sig);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
}

int RedisServer::connections() const {
    auto list = raw().cmd({"CLIENT", "LIST"}).str;
    return static_cast<int>(std::count(list.begin(), list.end(), '\n'));
}

void RedisServer::pause() {
    if (pid_ > 0) ::kill(pid_, SIGSTOP);
}
void RedisServer::resume() {
    if (pid_ > 0) ::kill(pid_, SIGCONT);
}

// Between fork and exec the child of a threaded process may call only what allocates nothing
// (another thread may have held the allocator's lock at the fork: under AddressSanitizer a
// test hung there), so argument and environment arrays are made before the fork.
pid_t spawn_logged(std::vector<std::string> argv, const std::string& log) {
    std::vector<char*> a;
    for (auto& s : argv) a.push_back(s.data());
    a.push_back(nullptr);
    pid_t pid = ::fork();
    if (pid == 0) {
        int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        ::dup2(out, 1);
        ::dup2(out, 2);
        ::execvp(a[0], a.data());
        ::_exit(127);
    }
    return pid;
}

int run_command(const std::vector<std::string>& argv, std::string* out,
                const std::vector<std::string>& extra_env) {
    // Close-on-exec: a command another thread starts meanwhile must not keep this pipe's
    // write end, or this read waits for that command to end too (an `etcdctl lock` started
    // in the background held a test's `etcdctl get` for a minute).
    std::vector<char*> a;
    for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    auto env = environment_with(extra_env);
    int pipefd[2];
    if (::pipe2(pipefd, O_CLOEXEC) != 0) return -1;
    pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(pipefd[1], 1);
        ::dup2(pipefd[1], 2);
        ::close(pipefd[0]);
        ::close(pipefd[1]);
        int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
        ::dup2(devnull, 0);
        ::execvpe(a[0], a.data(), env.data());
        ::_exit(127);
    }
    ::close(pipefd[1]);
    std::string buf;
    char tmp[4096];
    ssize_t n;
    while ((n = ::read(pipefd[0], tmp, sizeof tmp)) > 0) buf.append(tmp, size_t(n));
    ::close(pipefd[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (out) *out = buf;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return -1;
}

}  // namespace deadbolt::test
