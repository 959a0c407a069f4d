#include "memcached_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <stdexcept>
#include <thread>

#include "redis_server.hpp"

namespace deadbolt::test {

McServer::McServer(std::vector<std::string> args, bool evict)
    : args_(std::move(args)), evict_(evict), port_(free_port()) {
    log_ = "/tmp/deadbolt-memcached-" + std::to_string(port_) + ".log";
    start();
}

McServer::~McServer() {
    stop();
}

void McServer::start() {
    if (pid_ > 0) return;
    std::vector<std::string> argv = {"memcached", "-p", std::to_string(port_), "-l", "127.0.0.1",
                                     "-U",        "0"};
    if (!evict_) argv.emplace_back("-M");
    if (::geteuid() == 0) argv.insert(argv.end(), {"-u", "nobody"});
    argv.insert(argv.end(), args_.begin(), args_.end());
    pid_ = spawn_logged(argv, log_);
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!ready()) {
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
            pid_ = -1;
            throw std::runtime_error("memcached exited at start: see " + log_);
        }
        if (std::chrono::steady_clock::now() > until)
            throw std::runtime_error("memcached did not start: see " + log_);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

void McServer::stop(int sig) {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGCONT);
    ::kill(pid_, sig);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
}

void McServer::pause() {
    if (pid_ > 0) ::kill(pid_, SIGSTOP);
}

void McServer::resume() {
    if (pid_ > 0) ::kill(pid_, SIGCONT);
}

bool McServer::ready() const {
    return raw("version\r\n", 200).starts_with("VERSION");
}

std::string McServer::raw(const std::string& text, int timeout_ms) const {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return {};
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port_);
    ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    std::string out;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
        ::send(fd, text.data(), text.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(text.size())) {
        auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
        for (;;) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                            until - std::chrono::steady_clock::now())
                            .count();
            pollfd p{fd, POLLIN, 0};
            if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) break;
            char buf[65536];
            auto n = ::recv(fd, buf, sizeof buf, 0);
            if (n <= 0) break;
            out.append(buf, static_cast<std::size_t>(n));
        }
    }
    ::close(fd);
    return out;
}

}  // namespace deadbolt::test
