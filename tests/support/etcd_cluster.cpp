#include "etcd_cluster.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "redis_server.hpp"  // free_port, run_command

namespace deadbolt::test {

EtcdCluster::EtcdCluster(int members, Tls tls) : tls_(std::move(tls)) {
    // Members fsync their log on every commit; on tmpfs that costs nothing, so a test run
    // that loads the disk (CI runs two at once) cannot stall a cluster for seconds.
    std::string tmpl = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm/deadbolt-etcd-XXXXXX"
                                                       : "/tmp/deadbolt-etcd-XXXXXX";
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed for " + tmpl);
    dir_ = tmpl;
    // A port found free may be taken before a member binds it (tests run two at a time):
    // a member that exits at once gets the cluster made again on fresh ports, a few times.
    for (int tries = 0;; ++tries) {
        members_.clear();
        initial_cluster_.clear();
        for (int i = 0; i < members; ++i) {
            Member m{"m" + std::to_string(i), free_port(), free_port()};
            initial_cluster_ +=
                (i ? "," : "") + m.name + "=http://127.0.0.1:" + std::to_string(m.peer);
            members_.push_back(m);
        }
        for (int i = 0; i < members; ++i) start(i);
        if (healthy_within(std::chrono::seconds(30))) return;
        bool exited = std::any_of(members_.begin(), members_.end(),
                                  [](const Member& m) { return m.pid <= 0; });
        for (int i = 0; i < members; ++i) stop(i);
        if (!exited || tries == 2)
            throw std::runtime_error("etcd did not become healthy within 30 s; logs in " + dir_);
        for (const auto& m : members_) {
            std::error_code ec;
            std::filesystem::remove_all(dir_ + "/" + m.name, ec);
        }
    }
}

bool EtcdCluster::healthy_within(std::chrono::seconds limit) {
    auto until = std::chrono::steady_clock::now() + limit;
    while (etcdctl({"endpoint", "health"}) != 0) {
        for (auto& m : members_) {
            int status = 0;
            if (m.pid > 0 && ::waitpid(m.pid, &status, WNOHANG) == m.pid) m.pid = -1;
            if (m.pid <= 0) return false;  // it exited: a port was taken, or worse (its log)
        }
        if (std::chrono::steady_clock::now() > until) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return true;
}

EtcdCluster::~EtcdCluster() {
    for (int i = 0; i < static_cast<int>(members_.size()); ++i) stop(i);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
}

EtcdCluster& EtcdCluster::shared() {
    static EtcdCluster c(3);
    return c;
}

std::string EtcdCluster::endpoints() const {
    std::string out;
    for (const auto& m : members_)
        out += (out.empty() ? "" : ",") + std::string("127.0.0.1:") + std::to_string(m.client);
    return out;
}

void EtcdCluster::start(int member) {
    Member& m = members_.at(member);
    if (m.pid > 0) return;
    auto url = [](std::uint16_t port) { return "http://127.0.0.1:" + std::to_string(port); };
    auto client_url = [&](std::uint16_t port) {
        return (tls_.cert.empty() ? "http" : "https") + std::string("://127.0.0.1:") +
               std::to_string(port);
    };
    std::vector<std::string> args = {"etcd",
                                     "--name",
                                     m.name,
                                     "--data-dir",
                                     dir_ + "/" + m.name,
                                     "--listen-client-urls",
                                     client_url(m.client),
                                     "--advertise-client-urls",
                                     client_url(m.client),
                                     "--listen-peer-urls",
                                     url(m.peer),
                                     "--initial-advertise-peer-urls",
                                     url(m.peer),
                                     "--initial-cluster",
                                     initial_cluster_,
                                     "--initial-cluster-state",
                                     "new",
                                     "--initial-cluster-token",
                                     dir_};
    if (!tls_.cert.empty())
        args.insert(args.end(), {"--cert-file", tls_.cert, "--key-file", tls_.key,
                                 "--trusted-ca-file", tls_.ca, "--client-cert-auth"});
    m.pid = spawn_logged(std::move(args), dir_ + "/" + m.name + ".log");
}

void EtcdCluster::stop(int member, int sig) {
    Member& m = members_.at(member);
    if (m.pid <= 0) return;
    ::kill(m.pid, sig);
    int status = 0;
    ::waitpid(m.pid, &status, 0);
    m.pid = -1;
}

int EtcdCluster::etcdctl(const std::vector<std::string>& args, std::string* out,
                         std::chrono::seconds limit) const {
    std::vector<std::string> argv = {"etcdctl", "--endpoints",       endpoints(), "--dial-timeout",
                                     "1s",      "--command-timeout", "3s"};
    auto tls = ctl_tls();
    argv.insert(argv.end(), tls.begin(), tls.end());
    if (limit.count() > 0) argv.insert(argv.begin(), {"timeout", std::to_string(limit.count())});
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv, out, {"ETCDCTL_API=3"});
}

std::vector<std::string> EtcdCluster::ctl_tls() const {
    if (tls_.cert.empty()) return {};
    return {"--cacert", tls_.ca, "--cert", tls_.cert, "--key", tls_.key};
}

int EtcdCluster::leader() const {
    for (int i = 0; i < static_cast<int>(members_.size()); ++i) {
        if (members_[i].pid <= 0) continue;
        std::string out;
        // "address, id, version, db size, is leader, is learner, ..."
        std::vector<std::string> argv = {"etcdctl", "--endpoints",
                                         "127.0.0.1:" + std::to_string(members_[i].client),
                                         "--dial-timeout", "1s"};
        auto tls = ctl_tls();
        argv.insert(argv.end(), tls.begin(), tls.end());
        argv.insert(argv.end(), {"endpoint", "status"});
        if (run_command(argv, &out, {"ETCDCTL_API=3"}) == 0 &&
            out.find(", true, false,") != std::string::npos)
            return i;
    }
    return -1;
}

std::string EtcdCluster::metrics(int member) const {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(members_.at(member).client);
    std::string body;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
        std::string req = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
        if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size())) {
            char buf[65536];
            for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) body.append(buf, size_t(n));
        }
    }
    ::close(fd);
    auto start = body.find("\r\n\r\n");
    return start == std::string::npos ? std::string{} : body.substr(start + 4);
}

double EtcdCluster::metric_sum(const std::string& name,
                               const std::vector<std::string>& with) const {
    double sum = 0;
    for (int i = 0; i < static_cast<int>(members_.size()); ++i) {
        if (members_[i].pid <= 0) continue;
        std::istringstream in(metrics(i));
        for (std::string line; std::getline(in, line);) {
            // With labels (name{...} v), or without (name v).
            if (!line.starts_with(name + "{") && !line.starts_with(name + " ")) continue;
            bool all = true;
            for (const auto& w : with) all = all && line.find(w) != std::string::npos;
            if (all) sum += std::stod(line.substr(line.rfind(' ') + 1));
        }
    }
    return sum;
}

}  // namespace deadbolt::test
