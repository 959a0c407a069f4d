#include "zk_ensemble.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "redis_server.hpp"  // free_port, run_command

namespace deadbolt::test {

ZkEnsemble::ZkEnsemble(int servers) {
    // The servers fsync their log on every write; on tmpfs that costs nothing.
    std::string tmpl =
        ::access("/dev/shm", W_OK) == 0 ? "/dev/shm/deadbolt-zk-XXXXXX" : "/tmp/deadbolt-zk-XXXXXX";
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed for " + tmpl);
    dir_ = tmpl;
    // A port found free may be taken by another test's server before ours binds it (nine per
    // ensemble): a start that does not serve gets fresh ports, once.
    if (!launch(servers, std::chrono::seconds(30)) && !launch(servers, std::chrono::seconds(60)))
        throw std::runtime_error("ZooKeeper did not serve (twice, on fresh ports); data in " +
                                 dir_);
    // One write through every server: a fresh JVM's first requests can take seconds (class
    // loading, the leader's first snapshot), longer than a test's command timeout.
    for (int i = 0; i < servers; ++i)
        run_command({"timeout", "30", "/usr/bin/python3", "-c", R"(
import sys
from kazoo.client import KazooClient
zk = KazooClient(hosts=sys.argv[1]); zk.start()
zk.create("/deadbolt-warm-up", ephemeral=True); zk.delete("/deadbolt-warm-up"); zk.stop()
)",
                     "127.0.0.1:" + std::to_string(servers_[i].client)});
}

bool ZkEnsemble::launch(int servers, std::chrono::seconds within) {
    for (int i = 0; i < static_cast<int>(servers_.size()); ++i) stop(i);
    servers_.clear();
    for (int i = 0; i < servers; ++i) servers_.push_back({free_port(), free_port(), free_port()});
    for (int i = 0; i < servers; ++i) {
        auto data = dir_ + "/s" + std::to_string(i);
        std::filesystem::remove_all(data);
        std::filesystem::create_directories(data);
        std::ofstream(data + "/myid") << i + 1 << "\n";
        std::ofstream cfg(data + ".cfg");
        cfg << "tickTime=" << kTick.count() << "\ninitLimit=20\nsyncLimit=10\n"
            << "dataDir=" << data << "\nclientPort=" << servers_[i].client
            << "\nclientPortAddress=127.0.0.1\nadmin.enableServer=false\n"
            << "4lw.commands.whitelist=*\n";
        if (servers > 1)
            for (int j = 0; j < servers; ++j)
                cfg << "server." << j + 1 << "=127.0.0.1:" << servers_[j].peer << ":"
                    << servers_[j].election << "\n";
    }
    for (int i = 0; i < servers; ++i) start(i);
    auto until = std::chrono::steady_clock::now() + within;
    for (int i = 0; i < servers; ++i)
        while (!serving(i)) {
            if (std::chrono::steady_clock::now() > until) {
                for (int j = 0; j < servers; ++j) stop(j);
                return false;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    return true;
}

ZkEnsemble::~ZkEnsemble() {
    for (int i = 0; i < static_cast<int>(servers_.size()); ++i) stop(i);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
}

ZkEnsemble& ZkEnsemble::shared() {
    static ZkEnsemble e(3);
    return e;
}

std::string ZkEnsemble::hosts() const {
    std::string out;
    for (const auto& s : servers_)
        out += (out.empty() ? "" : ",") + std::string("127.0.0.1:") + std::to_string(s.client);
    return out;
}

void ZkEnsemble::start(int server) {
    Server& s = servers_.at(server);
    if (s.pid > 0) return;
    auto base = dir_ + "/s" + std::to_string(server);
    std::vector<std::string> args = {"java",
                                     "-Xmx256m",
                                     "-XX:+UseSerialGC",
                                     "-XX:TieredStopAtLevel=1",
                                     // No fsync per write: a killed member's log stays in the
                                     // page cache, and under the sanitizers' disk load one fsync
                                     // outlasted a 2 s command timeout (CI, stop 52).
                                     "-Dzookeeper.forceSync=no",
                                     "-Dzookeeper.log.dir=" + dir_,
                                     "-cp",
                                     "/etc/zookeeper/conf:/usr/share/java/zookeeper.jar",
                                     "org.apache.zookeeper.server.quorum.QuorumPeerMain",
                                     base + ".cfg"};
    s.pid = spawn_logged(std::move(args), base + ".log");
}

void ZkEnsemble::stop(int server, int sig) {
    Server& s = servers_.at(server);
    if (s.pid <= 0) return;
    ::kill(s.pid, sig);
    int status = 0;
    ::waitpid(s.pid, &status, 0);
    s.pid = -1;
}

std::string ZkEnsemble::ask(int server, const std::string& cmd) const {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return {};
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(servers_.at(server).client);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval tv{2, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::string out;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
        ::write(fd, cmd.data(), cmd.size()) == static_cast<ssize_t>(cmd.size())) {
        char buf[4096];
        for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
            out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return out;
}

bool ZkEnsemble::serving(int server) const {
    auto srvr = ask(server, "srvr");
    return srvr.find("Mode: leader") != std::string::npos ||
           srvr.find("Mode: follower") != std::string::npos ||
           srvr.find("Mode: standalone") != std::string::npos;
}

int ZkEnsemble::leader() const {
    for (int i = 0; i < static_cast<int>(servers_.size()); ++i)
        if (servers_[i].pid > 0 && ask(i, "srvr").find("Mode: leader") != std::string::npos)
            return i;
    return -1;
}

int ZkEnsemble::kazoo(const std::string& script, const std::vector<std::string>& args,
                      std::string* out, std::chrono::seconds limit) const {
    std::vector<std::string> argv = {
        "timeout", std::to_string(limit.count()), "/usr/bin/python3", "-c", script, hosts()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv, out);
}

}  // namespace deadbolt::test
