// EtcdCluster: real etcd members (Debian's etcd-server) on free ports, for the etcd
// backend's tests; etcdctl (etcd-client) runs against them as the engine's own tool.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace deadbolt::test {

class EtcdCluster {
  public:
    /// Starts `members` members as one new cluster and waits until every one is healthy.
    /// Throws std::runtime_error when they do not come up within 30 s.
    explicit EtcdCluster(int members = 1);
    ~EtcdCluster();
    EtcdCluster(const EtcdCluster&) = delete;
    EtcdCluster& operator=(const EtcdCluster&) = delete;

    /// "127.0.0.1:p0,127.0.0.1:p1,...": every member's client address.
    std::string endpoints() const;
    std::uint16_t client_port(int member) const { return members_.at(member).client; }
    /// SIGKILL (or sig) to one member; start() brings it back with its data.
    void stop(int member, int sig = 9);
    void start(int member);
    /// Runs etcdctl with args against every member: its exit status; its output in *out.
    int etcdctl(const std::vector<std::string>& args, std::string* out = nullptr) const;

  private:
    struct Member {
        std::string name;
        std::uint16_t client = 0, peer = 0;
        pid_t pid = -1;
    };
    std::string dir_, initial_cluster_;
    std::vector<Member> members_;
};

}  // namespace deadbolt::test
