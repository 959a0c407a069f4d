// ZkEnsemble: real ZooKeeper servers (Debian's zookeeper, on the JVM) on free ports, for the
// ZooKeeper backend's tests; Kazoo (python3-kazoo) runs against them as another client.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace deadbolt::test {

class ZkEnsemble {
  public:
    /// The ensemble's tick: sessions last 2 to 20 ticks (1 s to 10 s), so tests can make
    /// one expire in seconds.
    static constexpr std::chrono::milliseconds kTick{500};
    /// Starts `servers` servers as one ensemble and waits until each serves (a leader or
    /// a follower). Throws std::runtime_error when they do not, twice.
    explicit ZkEnsemble(int servers = 3);
    ~ZkEnsemble();
    ZkEnsemble(const ZkEnsemble&) = delete;
    ZkEnsemble& operator=(const ZkEnsemble&) = delete;

    /// One three-server ensemble per test process, for tests that leave it as they found it.
    static ZkEnsemble& shared();

    /// "127.0.0.1:p0,127.0.0.1:p1,...": every server's client address.
    std::string hosts() const;
    /// "zk://" and every server, then path (e.g. "/chroot?session_timeout=2s").
    std::string url(const std::string& path = "") const { return "zk://" + hosts() + path; }
    std::uint16_t client_port(int server) const { return servers_.at(server).client; }
    /// SIGKILL (or sig) to one server; start() brings it back with its data.
    void stop(int server, int sig = 9);
    void start(int server);
    /// A four-letter command's answer from one server ("" when it does not answer).
    std::string ask(int server, const std::string& cmd) const;
    /// The server that leads now, or -1.
    int leader() const;
    /// Runs a Python 3 script with Kazoo, argv[1] = hosts(), then args: its exit status;
    /// its output in *out. Ended with SIGTERM after limit.
    int kazoo(const std::string& script, const std::vector<std::string>& args,
              std::string* out = nullptr,
              std::chrono::seconds limit = std::chrono::seconds(60)) const;

  private:
    struct Server {
        std::uint16_t client = 0, peer = 0, election = 0;
        pid_t pid = -1;
    };
    bool serving(int server) const;
    // Starts the servers on fresh ports: whether all serve within `within`.
    bool launch(int servers, std::chrono::seconds within);
    std::string dir_;
    std::vector<Server> servers_;
};

}  // namespace deadbolt::test
