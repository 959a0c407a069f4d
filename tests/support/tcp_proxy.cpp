#include "tcp_proxy.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>
#include <string>

namespace deadbolt::test {
namespace {
// What a pump keeps of the bytes it sent up, for a stall text split across two reads: longer
// than any text a test stalls on.
constexpr std::size_t kTailKept = 4096;
}  // namespace

TcpProxy::TcpProxy(std::uint16_t target_port) : target_(target_port) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(listen_fd_, 64) != 0)
        throw std::runtime_error("TcpProxy: bind/listen failed");
    socklen_t len = sizeof a;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
    // Named before anyone can count it: told apart from the client's threads.
    pthread_setname_np(acceptor_.native_handle(), kThreadName);
}

TcpProxy::~TcpProxy() {
    stop_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);
    ::close(listen_fd_);
    acceptor_.join();
    std::lock_guard lk(m_);
    for (auto& t : threads_) t.join();
}

void TcpProxy::cut_all() {
    ++cut_gen_;
}

void TcpProxy::accept_loop() {
    while (!stop_) {
        pollfd p{listen_fd_, POLLIN, 0};
        if (::poll(&p, 1, 50) <= 0) continue;
        // CLOEXEC: a server the tests fork and exec later (a restarted member) must not keep
        // a copy of the socket, or closing it here would send no FIN and a client would see
        // a dead member's connection hang until its keepalive gives up.
        int c = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0) continue;
        int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons(target_);
        if (::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
            ::close(c);
            ::close(s);
            continue;
        }
        std::lock_guard lk(m_);
        threads_.emplace_back([this, c, s] { pump(c, s); });
        pthread_setname_np(threads_.back().native_handle(), kThreadName);
    }
}

void TcpProxy::stall_replies_from_request_with(std::string text) {
    std::lock_guard lock(stall_m_);
    stall_at_ = std::move(text);
}

void TcpProxy::pump(int c, int s) {
    unsigned gen = cut_gen_;
    std::string up, down;   // held-back bytes per direction
    std::string sent_tail;  // the end of what went up, where a stall's text may have begun
    char buf[16384];
    while (!stop_ && gen == cut_gen_) {
        pollfd p[2] = {{freeze_up_ ? -1 : c, POLLIN, 0}, {s, POLLIN, 0}};
        if (::poll(p, 2, 20) < 0) break;
        bool closed = false;
        // The flag is read again under freeze_m_ before the read: a poll begun before
        // freeze_requests(true) returned could see a request sent after it, and let it through
        // (on a loaded machine a test saw the release it had frozen answered).
        std::unique_lock frozen(freeze_m_);
        const bool take = !freeze_up_ && (p[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0;
        ssize_t n = take ? ::read(c, buf, sizeof buf) : 0;
        frozen.unlock();
        if (take) {
            if (n <= 0)
                closed = true;
            else
                up.append(buf, size_t(n));
            std::lock_guard lock(stall_m_);
            if (n > 0 && !stall_at_.empty()) {
                // Only a text that ends in this read: one wholly in what went up before was
                // looked for then.
                const auto keep = std::min(sent_tail.size(), stall_at_.size() - 1);
                if ((sent_tail.substr(sent_tail.size() - keep) + up).find(stall_at_) !=
                    std::string::npos) {
                    stall_down_ = true;
                    stall_at_.clear();
                }
            }
        }
        if (p[1].revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t n = ::read(s, buf, sizeof buf);
            if (n <= 0) {
                closed = true;
            } else {
                down.append(buf, size_t(n));
                if (stall_down_) held_down_ += size_t(n);
            }
        }
        if (!stall_up_ && !up.empty()) {
            if (::send(s, up.data(), up.size(), MSG_NOSIGNAL) < 0) closed = true;
            sent_tail += up;
            if (sent_tail.size() > kTailKept) sent_tail.erase(0, sent_tail.size() - kTailKept);
            up.clear();
        }
        if (!stall_down_ && !down.empty()) {
            if (::send(c, down.data(), down.size(), MSG_NOSIGNAL) < 0) closed = true;
            passed_down_ += down.size();
            down.clear();
        }
        if (closed) break;
    }
    ::close(c);
    ::close(s);
}

}  // namespace deadbolt::test
