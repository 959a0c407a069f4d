// EtcdCluster: real etcd members (Debian's etcd-server) on free ports, for the etcd
// backend's tests; etcdctl (etcd-client) runs against them as the engine's own tool.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace deadbolt::test {

class EtcdCluster {
  public:
    /// Client-side TLS of the members (files of a test::Certs): https only, client
    /// certificates signed by ca required.
    struct Tls {
        std::string cert, key, ca;
    };
    /// Starts `members` members as one new cluster and waits until every one is healthy.
    /// Throws std::runtime_error when they do not come up within 30 s.
    explicit EtcdCluster(int members = 1, Tls tls = {});
    ~EtcdCluster();
    EtcdCluster(const EtcdCluster&) = delete;
    EtcdCluster& operator=(const EtcdCluster&) = delete;

    /// One three-member cluster per test process, for tests that leave it as they found it.
    static EtcdCluster& shared();

    /// "127.0.0.1:p0,127.0.0.1:p1,...": every member's client address.
    std::string endpoints() const;
    /// "etcd://" and every member.
    std::string url() const { return "etcd://" + endpoints(); }
    std::uint16_t client_port(int member) const { return members_.at(member).client; }
    /// SIGKILL (or sig) to one member; start() brings it back with its data.
    void stop(int member, int sig = 9);
    void start(int member);
    /// Runs etcdctl with args against every member: its exit status; its output in *out.
    /// With limit > 0, etcdctl is ended with SIGTERM after that long (for commands that run
    /// until stopped, like `elect`).
    int etcdctl(const std::vector<std::string>& args, std::string* out = nullptr,
                std::chrono::seconds limit = std::chrono::seconds(0)) const;
    /// The member that leads now, or -1 when none of the running ones says it does.
    int leader() const;
    /// The member's Prometheus metrics (GET /metrics on its client port); empty on failure.
    std::string metrics(int member) const;
    /// The sum of a metric's samples whose labels contain every one of `with`, over the
    /// running members (e.g. unary gRPC calls started: grpc_server_started_total with
    /// grpc_type="unary").
    double metric_sum(const std::string& name, const std::vector<std::string>& with) const;

  private:
    struct Member {
        std::string name;
        std::uint16_t client = 0, peer = 0;
        pid_t pid = -1;
    };
    std::vector<std::string> ctl_tls() const;  // etcdctl's TLS arguments
    // True once the members answer healthy; false by limit, or as soon as one exited.
    bool healthy_within(std::chrono::seconds limit);
    std::string dir_, initial_cluster_;
    Tls tls_;
    std::vector<Member> members_;
};

}  // namespace deadbolt::test
