// Reading OpenMetrics text in tests: one sample's value, a GET over plain HTTP, and a
// `deadbolt exporter` run in the background.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <signal.h>
#include <sys/wait.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "redis_server.hpp"  // free_port, spawn_logged

namespace deadbolt::test {

/// The value of the sample line that starts with series (name and labels), or -1 if none.
inline double sample(const std::string& text, const std::string& series) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        if (line.starts_with(series + " ")) return std::stod(line.substr(series.size() + 1));
    return -1;
}

/// The value of the first sample of metric whose labels contain label (e.g. kind="mutex"), or
/// -1 if none.
inline double sample_where(const std::string& text, const std::string& metric,
                           const std::string& label) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        if (line.starts_with(metric + "{") && line.find(label) != std::string::npos)
            return std::stod(line.substr(line.rfind(' ') + 1));
    return -1;
}

/// GET path from 127.0.0.1:port: the whole response, headers and body ("" when refused).
inline std::string http_get(std::uint16_t port, const std::string& path) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval limit{.tv_sec = 10, .tv_usec = 0};  // a peer that accepts and never answers
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    std::string out;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
        std::string req = "GET " + path + " HTTP/1.0\r\nHost: localhost\r\n\r\n";
        (void)::write(fd, req.data(), req.size());
        char buf[4096];
        for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, n);
    }
    ::close(fd);
    return out;
}

#ifdef DEADBOLT_CLI
/// `deadbolt exporter --url url --listen 127.0.0.1:port extra...` in the background, its
/// output in log; stopped with SIGTERM by stop() or at the end.
class ExporterProcess {
  public:
    ExporterProcess(const std::string& url, std::vector<std::string> extra, const std::string& log)
        : port_(free_port()) {
        std::vector<std::string> argv{DEADBOLT_CLI, "exporter",
                                      "--url",      url,
                                      "--listen",   "127.0.0.1:" + std::to_string(port_)};
        argv.insert(argv.end(), extra.begin(), extra.end());
        pid_ = spawn_logged(argv, log);
    }
    ~ExporterProcess() { stop(); }
    ExporterProcess(const ExporterProcess&) = delete;
    ExporterProcess& operator=(const ExporterProcess&) = delete;
    std::uint16_t port() const { return port_; }
    /// GET /metrics: the response's body, or "" while it does not answer.
    std::string scrape() const {
        auto r = http_get(port_, "/metrics");
        auto body = r.find("\r\n\r\n");
        return body == std::string::npos ? std::string() : r.substr(body + 4);
    }
    /// SIGTERM, then its exit status (128 + signal when a signal ended it).
    int stop() {
        if (pid_ <= 0) return status_;  // never signal -1 (every process) after a failed fork
        ::kill(pid_, SIGTERM);
        int st = 0;
        ::waitpid(pid_, &st, 0);
        pid_ = 0;
        status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        return status_;
    }

  private:
    std::uint16_t port_;
    pid_t pid_ = 0;
    int status_ = -1;
};
#endif

}  // namespace deadbolt::test
