// Scenario 1's raw contender with deadbolt's system calls: the same two scripts as raw
// hiredis, each sent and waited for the way deadbolt's blocking connection does it (a send
// that never blocks, then a blocking recv bounded by the socket's receive timeout, set once),
// where hiredis writes and reads a socket with no timeout. What this costs over raw hiredis is
// the price of that design (a deadline, and other threads' requests on the same connection),
// told apart from the library's own logic. Until 2026-11-29 deadbolt waited in ppoll on the
// socket and an eventfd, then read: a system call more per round trip.
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "scenarios.hpp"

namespace deadbolt::bench {
namespace {

class Polled {
  public:
    explicit Polled(int port) {
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        sockaddr_in at{};
        at.sin_family = AF_INET;
        at.sin_port = htons(static_cast<std::uint16_t>(port));
        at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        int one = 1;
        ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        int err = fd_ < 0 ? errno : 0;
        if (err == 0 && ::connect(fd_, reinterpret_cast<sockaddr*>(&at), sizeof at) != 0)
            err = errno == EINPROGRESS ? 0 : errno;
        pollfd p{fd_, POLLOUT, 0};
        socklen_t len = sizeof err;
        if (err == 0 && ::poll(&p, 1, 5000) != 1) err = ETIMEDOUT;
        if (err == 0) ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len);
        timeval bound{.tv_sec = 2, .tv_usec = 0};
        if (err == 0 && (::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK) != 0 ||
                         ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &bound, sizeof bound) != 0))
            err = errno;
        if (err != 0) {
            close_all();
            throw std::runtime_error("bench: cannot connect to redis-server at 127.0.0.1:" +
                                     std::to_string(port) + ": " + std::strerror(err));
        }
        reader_ = redisReaderCreate();
    }
    ~Polled() {
        redisReaderFree(reader_);
        close_all();
    }
    Polled(const Polled&) = delete;
    Polled& operator=(const Polled&) = delete;

    void cmd(const std::vector<std::string>& args) {
        std::vector<const char*> argv;
        std::vector<std::size_t> lens;
        for (const auto& a : args) argv.push_back(a.c_str()), lens.push_back(a.size());
        char* out = nullptr;
        long long n =
            redisFormatCommandArgv(&out, static_cast<int>(args.size()), argv.data(), lens.data());
        if (::send(fd_, out, static_cast<std::size_t>(n), MSG_NOSIGNAL | MSG_DONTWAIT) != n)
            throw std::runtime_error("bench: a short send");
        redisFreeCommand(out);
        void* reply = nullptr;
        while (reply == nullptr) {
            ssize_t got = ::recv(fd_, buf_.data(), buf_.size(), 0);
            if (got < 0 && errno == EAGAIN) throw std::runtime_error("bench: no reply");
            if (got <= 0) throw std::runtime_error("bench: the connection closed");
            redisReaderFeed(reader_, buf_.data(), static_cast<std::size_t>(got));
            if (redisReaderGetReply(reader_, &reply) != REDIS_OK)
                throw std::runtime_error("bench: bad reply");
        }
        auto* r = static_cast<redisReply*>(reply);
        bool failed = r->type == REDIS_REPLY_ERROR;
        freeReplyObject(reply);
        if (failed) throw std::runtime_error("bench: redis-server refused a script");
    }

  private:
    void close_all() noexcept {
        if (fd_ >= 0) ::close(fd_);
    }

    int fd_ = -1;
    redisReader* reader_ = nullptr;
    // Made once, as deadbolt's read buffer is: zeroing 16 KiB per reply cost the contender
    // more instructions than the rest of its cycle.
    std::vector<char> buf_ = std::vector<char>(16384);
};

}  // namespace

int cycle_polled(const Args& a) {
    run_cycles(a, [&](int t, std::vector<double>& lat) {
        Polled c(a.port);
        script_cycles([&](const auto& argv) { c.cmd(argv); },
                      a.key + ":" + std::to_string(a.id) + ":" + std::to_string(t), a.until_ns,
                      lat);
    });
    return 0;
}

}  // namespace deadbolt::bench
