#include "backends/memcached/conn.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace deadbolt::detail {
namespace {

int ms_until(Clock::time_point by) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(by - Clock::now()).count();
    return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

// Waits until fd is ready for events, or by: false at the deadline.
bool ready(int fd, short events, Clock::time_point by) {
    for (;;) {
        pollfd p{fd, events, 0};
        int n = ::poll(&p, 1, ms_until(by));
        if (n > 0) return true;
        if (n == 0) return false;
        if (errno != EINTR) return false;
    }
}

}  // namespace

Status McConn::open(const HostPort& server, Clock::time_point by, std::unique_ptr<McConn>& out) {
    const std::string where = server.describe();
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    std::string port = std::to_string(server.port);
    if (int rc = ::getaddrinfo(server.host.c_str(), port.c_str(), &hints, &found); rc != 0)
        return Status::error(errc::connect_failed,
                             fmt::format("memcached at {}: cannot resolve '{}': {}", where,
                                         server.host, ::gai_strerror(rc)));
    std::string why = "no address";
    for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
        int fd =
            ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
        if (rc != 0 && errno == EINPROGRESS) {
            if (ready(fd, POLLOUT, by)) {
                int err = 0;
                socklen_t len = sizeof err;
                ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
                rc = err == 0 ? 0 : -1;
                errno = err;
            } else {
                errno = ETIMEDOUT;
            }
        }
        // Blocking from here on: a read waits for the reply in the kernel, bounded by the
        // socket's receive timeout, in one system call rather than a poll and a read.
        if (rc == 0 && ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) rc = -1;
        if (rc == 0) {
            int one = 1;
            ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            ::freeaddrinfo(found);
            out.reset(new McConn(fd, where));
            return {};
        }
        why = std::strerror(errno);
        ::close(fd);
    }
    ::freeaddrinfo(found);
    return Status::error(errc::connect_failed,
                         fmt::format("cannot connect to memcached at {}: {} (is memcached "
                                     "running there? check the URL's host and port)",
                                     where, why));
}

McConn::~McConn() {
    close();
}

void McConn::close() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
}

Status McConn::send(std::string_view bytes, Clock::time_point by) {
    std::size_t done = 0;
    while (done < bytes.size()) {
        if (fd_ < 0) break;
        ssize_t n =
            ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            done += static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && ready(fd_, POLLOUT, by)) continue;
        close();
        // Part of a request may be out: what it does is unknown.
        return Status::error(
            done == 0 ? errc::connection_lost : errc::unknown_outcome,
            fmt::format("memcached at {}: the connection broke while sending", where_));
    }
    if (fd_ < 0)
        return Status::error(errc::connection_lost,
                             fmt::format("memcached at {}: the connection is closed", where_));
    return {};
}

bool McConn::read_some(Clock::time_point by, std::string& into, Status& why) {
    char buf[16384];
    for (;;) {
        // Past the deadline, what has come is still read (a round reads its servers one after
        // another: the others' replies are there once a stalled one's wait ends).
        auto left = by - Clock::now();
        const bool late = left <= Clock::duration::zero();
        const bool bounded = !late && bound_.fit(fd_, left);
        // A socket whose timeout cannot be set waits in poll (a read with no bound could wait
        // for ever), then reads without blocking.
        if (!late && !bounded) ready(fd_, POLLIN, by);
        ssize_t n = ::recv(fd_, buf, sizeof buf, bounded ? 0 : MSG_DONTWAIT);
        if (n > 0) {
            into.append(buf, static_cast<std::size_t>(n));
            return true;
        }
        // EAGAIN: the receive timeout passed, which may be short of the deadline.
        if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (late) break;
            continue;
        }
        hung_up_ = true;
        why = Status::error(errc::unknown_outcome,
                            fmt::format("memcached at {} closed the connection before "
                                        "answering (did it restart?)",
                                        where_));
        close();
        return false;
    }
    why = Status::error(errc::unknown_outcome,
                        fmt::format("memcached at {} did not answer in time", where_));
    close();
    return false;
}

Status McConn::receive(std::size_t n, Clock::time_point by, std::vector<MetaReply>& out) {
    // Parsed over out's replies, in place: their strings keep their room from the last round.
    std::size_t have = 0;
    auto came = [&](Status st) {  // out holds what came, and no more
        out.resize(have);
        return st;
    };
    while (have < n) {
        if (have == out.size()) out.emplace_back();
        MetaReply& r = out[have];
        switch (parser_.next(r)) {
            case MetaParser::Result::reply:
                ++have;
                continue;
            case MetaParser::Result::garbage: {
                auto seen = std::move(r.value);
                close();
                return came(Status::error(
                    errc::protocol_error,
                    fmt::format("the server at {} does not speak memcached's meta protocol "
                                "(it sent '{}'): check the URL's port, and that it runs "
                                "memcached 1.6 or later",
                                where_, seen)));
            }
            case MetaParser::Result::need_more:
                break;
        }
        if (fd_ < 0)
            return came(
                Status::error(errc::connection_lost,
                              fmt::format("memcached at {}: the connection is closed", where_)));
        got_.clear();
        if (Status why; !read_some(by, got_, why)) return came(std::move(why));
        parser_.feed(got_);
    }
    return came({});
}

Status McConn::stats(std::string_view what, Clock::time_point by,
                     std::vector<std::pair<std::string, std::string>>& out) {
    out.clear();
    std::string req = what.empty() ? "stats\r\n" : fmt::format("stats {}\r\n", what);
    if (Status st = send(req, by); !st.ok()) return st;
    std::string text;
    while (text.find("END\r\n") == std::string::npos) {
        if (text.starts_with("ERROR") || text.find("_ERROR") != std::string::npos ||
            text.size() > (1 << 20) ||
            (text.size() >= 5 && !text.starts_with("STAT ") && !text.starts_with("END"))) {
            close();
            return Status::error(
                errc::protocol_error,
                fmt::format("the server at {} does not answer `stats` as memcached does (it "
                            "sent '{}'): check the URL's port",
                            where_, text.substr(0, 64)));
        }
        if (Status why; !read_some(by, text, why)) return why;
    }
    for (std::size_t at = 0; at < text.size();) {
        auto eol = text.find("\r\n", at);
        std::string_view line(text.data() + at, eol - at);
        at = eol + 2;
        if (!line.starts_with("STAT ")) break;
        line.remove_prefix(5);
        auto sp = line.find(' ');
        out.emplace_back(std::string(line.substr(0, sp)),
                         sp == std::string_view::npos ? "" : std::string(line.substr(sp + 1)));
    }
    return {};
}

Status McConn::lines(std::string_view request, Clock::time_point by,
                     std::vector<std::string>& out) {
    out.clear();
    if (Status st = send(request, by); !st.ok()) return st;
    std::string text;
    for (;;) {
        // metadump ends its lines with a bare \n (memcached 1.6), and only END with \r\n.
        if (text.starts_with("END\r\n") || text.find("\nEND\r\n") != std::string::npos) break;
        if (text.starts_with("ERROR") || text.starts_with("CLIENT_ERROR") ||
            text.starts_with("SERVER_ERROR")) {
            close();
            return Status::error(errc::server_error,
                                 fmt::format("memcached at {} refused '{}': {}", where_,
                                             request.substr(0, request.find('\r')),
                                             text.substr(0, text.find('\r'))));
        }
        if (Status why; !read_some(by, text, why)) return why;
    }
    for (std::size_t at = 0; at < text.size();) {
        auto eol = text.find('\n', at);
        if (eol == std::string::npos) break;
        std::string line = text.substr(at, eol - at);
        at = eol + 1;
        if (line.ends_with('\r')) line.pop_back();
        if (line == "END") break;
        out.push_back(std::move(line));
    }
    return {};
}

}  // namespace deadbolt::detail
