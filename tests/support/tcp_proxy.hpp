// TcpProxy: a loopback TCP proxy in front of a server that can stall or cut connections.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace deadbolt::test {

class TcpProxy {
  public:
    /// The name of the proxy's threads (/proc's comm), which end a moment after their
    /// connection does.
    static constexpr const char* kThreadName = "tcp-proxy";

    explicit TcpProxy(std::uint16_t target_port);
    ~TcpProxy();
    std::uint16_t port() const { return port_; }
    std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
    /// While set, bytes from the server to clients are held back (replies "lost").
    void stall_replies(bool on) { stall_down_ = on; }
    /// Sets stall_replies once a client sends a request containing text (once; text is then
    /// forgotten): the answer to that request, and all after it, are held back.
    void stall_replies_from_request_with(std::string text);
    /// Bytes of replies passed on to clients so far.
    std::size_t replies_passed() const { return passed_down_; }
    /// Bytes of replies that arrived while stall_replies was set.
    std::size_t replies_held() const { return held_down_; }
    /// While set, bytes from clients to the server are held back.
    void stall_requests(bool on) { stall_up_ = on; }
    /// While set, the proxy reads nothing from clients, so their sockets' buffers fill up
    /// and their writes block (a server too busy to read).
    /// Once freeze_requests(true) returns, no byte a client sends after it is read.
    void freeze_requests(bool on) {
        std::lock_guard lock(freeze_m_);
        freeze_up_ = on;
    }
    /// Closes every current connection (both sides).
    void cut_all();
    /// New connections go to this port from now on (like a virtual IP moved to another
    /// server); current ones stay where they are until cut.
    void retarget(std::uint16_t target_port) { target_ = target_port; }

  private:
    void accept_loop();
    void pump(int client_fd, int server_fd);

    std::atomic<std::uint16_t> target_;
    std::uint16_t port_ = 0;
    int listen_fd_ = -1;
    std::atomic<bool> stop_{false}, stall_down_{false}, stall_up_{false}, freeze_up_{false};
    std::atomic<unsigned> cut_gen_{0};
    std::atomic<std::size_t> passed_down_{0}, held_down_{0};
    std::mutex m_;
    // Not m_: the destructor holds m_ while it joins the pumps.
    std::mutex stall_m_;
    std::string stall_at_;  // under stall_m_
    std::mutex freeze_m_;   // a pump's check of freeze_up_ and its read of a client, together
    std::vector<std::thread> threads_;
    std::thread acceptor_;
};

}  // namespace deadbolt::test
