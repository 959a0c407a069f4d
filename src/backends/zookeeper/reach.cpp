#include "backends/zookeeper/reach.hpp"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

namespace deadbolt::detail {
namespace {

using Clock = std::chrono::steady_clock;

// strerror's text as the middle of a sentence: "connection refused".
std::string reason(int err) {
    std::string s = std::strerror(err);
    if (!s.empty()) s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
    return s;
}

// One connection on its way: the server it is for.
struct Attempt {
    int fd = -1;
    std::size_t server = 0;
};

}  // namespace

std::vector<Reached> reach(const std::vector<HostPort>& servers, Clock::time_point by) {
    std::vector<Reached> out(servers.size());
    std::vector<Attempt> pending;
    for (std::size_t i = 0; i < servers.size(); ++i) out[i].server = servers[i].describe();
    bool any = false;  // one accepted: the others need not be known
    for (std::size_t i = 0; i < servers.size() && !any; ++i) {
        addrinfo hints{};
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        addrinfo* found = nullptr;
        auto port = std::to_string(servers[i].port);
        if (int rc = ::getaddrinfo(servers[i].host.c_str(), port.c_str(), &hints, &found);
            rc != 0) {
            out[i].why = std::string("cannot resolve its name: ") + ::gai_strerror(rc);
            continue;
        }
        for (auto* a = found; a && !any; a = a->ai_next) {
            int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                              a->ai_protocol);
            if (fd < 0) {
                out[i].why = reason(errno);
                continue;
            }
            if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
                out[i].accepted = any = true;
                ::close(fd);
            } else if (errno == EINPROGRESS) {
                pending.push_back({fd, i});
            } else {
                out[i].why = reason(errno);
                ::close(fd);
            }
        }
        ::freeaddrinfo(found);
    }
    while (!any && !pending.empty()) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(by - Clock::now());
        if (left.count() <= 0) break;
        std::vector<pollfd> fds;
        fds.reserve(pending.size());
        for (const auto& p : pending) fds.push_back({p.fd, POLLOUT, 0});
        int n = ::poll(fds.data(), fds.size(),
                       static_cast<int>(std::min<long long>(left.count(), 1000)));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;
        for (std::size_t k = fds.size(); k-- > 0;) {
            if (fds[k].revents == 0) continue;
            int err = 0;
            socklen_t len = sizeof err;
            if (::getsockopt(fds[k].fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
            Reached& r = out[pending[k].server];
            if (err == 0)
                r.accepted = any = true;
            else
                r.why = reason(err);
            ::close(fds[k].fd);
            pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(k));
        }
    }
    for (const auto& p : pending) {
        Reached& r = out[p.server];
        if (!r.accepted && r.why.empty()) r.why = "no answer by the connect timeout";
        ::close(p.fd);
    }
    return out;
}

}  // namespace deadbolt::detail
