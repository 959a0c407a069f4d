// McServer: a real memcached (Debian's memcached) on a free port, for the memcached engine's
// tests. By default it runs with -M (no evictions: what deadbolt asks of a lock server).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace deadbolt::test {

class McServer {
  public:
    /// Starts it with args added (e.g. {"-m", "8"}); evict: without -M. Throws
    /// std::runtime_error when it does not start.
    explicit McServer(std::vector<std::string> args = {}, bool evict = false);
    ~McServer();
    McServer(const McServer&) = delete;
    McServer& operator=(const McServer&) = delete;

    std::uint16_t port() const { return port_; }
    std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
    std::string url(const std::string& suffix = "") const {
        return "memcached://" + address() + suffix;
    }
    /// Sends text as is and returns what the server answered within timeout_ms (whole lines).
    std::string raw(const std::string& text, int timeout_ms = 300) const;
    /// SIGKILL (or sig) to the server; start() brings it back on the same port, empty.
    void stop(int sig = 9);
    void start();
    /// SIGSTOP / SIGCONT.
    void pause();
    void resume();

  private:
    bool ready() const;
    std::vector<std::string> args_;
    bool evict_ = false;
    std::uint16_t port_ = 0;
    pid_t pid_ = -1;
    std::string log_;
};

}  // namespace deadbolt::test
