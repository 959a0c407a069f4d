#include "lock_side.hpp"

#include "etcd_cluster.hpp"
#include "mariadb_server.hpp"
#include "memcached_server.hpp"
#include "pg_server.hpp"
#include "zk_ensemble.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <thread>

namespace deadbolt::torture {

LockSide::LockSide(const std::string& dir, int workers, const SideSpec& spec)
    : nodes_(static_cast<std::size_t>(std::max(1, spec.etcd || spec.zk ? 3 : spec.nodes))),
      session_(spec.session) {
    const bool aof = spec.aof, standby = spec.standby, sentinels = spec.sentinels;
    if (!spec.database.empty()) {
        std::uint16_t port = 0;
        if (spec.database == "pg")
            pg_ = std::make_unique<test::PgServer>(), port = pg_->port();
        else if (spec.database == "memcached")
            mc_ = std::make_unique<test::McServer>(), port = mc_->port();
        else
            mariadb_ = std::make_unique<test::MariaDbServer>(), port = mariadb_->port();
        for (int w = 0; w < workers; ++w)
            proxies_.push_back(std::make_unique<test::TcpProxy>(port));
        return;
    }
    if (spec.zk) {
#ifdef DEADBOLT_TORTURE_ZK
        zk_ = std::make_unique<test::ZkEnsemble>(static_cast<int>(nodes_));
        for (int w = 0; w < workers; ++w)
            for (std::size_t m = 0; m < nodes_; ++m)
                proxies_.push_back(
                    std::make_unique<test::TcpProxy>(zk_->client_port(static_cast<int>(m))));
        return;
#else
        throw std::runtime_error("torture: built without ZooKeeper (libzookeeper-mt-dev)");
#endif
    }
    if (spec.etcd) {
#ifdef DEADBOLT_TORTURE_ETCD
        etcd_ = std::make_unique<test::EtcdCluster>(static_cast<int>(nodes_));
        for (int w = 0; w < workers; ++w)
            for (std::size_t m = 0; m < nodes_; ++m)
                proxies_.push_back(
                    std::make_unique<test::TcpProxy>(etcd_->client_port(static_cast<int>(m))));
        return;
#else
        throw std::runtime_error("torture: built without etcd (Debian's etcd-server and grpc)");
#endif
    }
    if (spec.cluster) {
        cluster_ = std::make_unique<test::RedisCluster>();
        return;
    }
    // A full resync after failover should start at once, not after the default 5 s delay.
    std::vector<std::string> args = {"--repl-diskless-sync-delay", "0"};
    if (aof) args.insert(args.end(), {"--appendonly", "yes", "--appendfsync", "always"});
    if (sentinels) {
        clocks_.push_back(std::make_unique<SteeredClock>(dir + "/server-clock", CLOCK_REALTIME));
        servers_.push_back(std::make_unique<test::RedisServer>(args, clocks_.front()->env()));
        auto replica = args;
        replica.insert(replica.end(),
                       {"--replicaof", "127.0.0.1", std::to_string(servers_[0]->port())});
        servers_.push_back(std::make_unique<test::RedisServer>(replica, clocks_.front()->env()));
        for (int i = 0; i < 3; ++i)
            sentinels_.push_back(test::RedisServer::sentinel(
                "sentinel monitor torture 127.0.0.1 " + std::to_string(servers_[0]->port()) +
                " 2\nsentinel down-after-milliseconds torture 1000\n"
                "sentinel failover-timeout torture 3000\n"));
        // Ready when every sentinel knows the replica and the other two (an election needs
        // them).
        for (int i = 0; i < 1500; ++i) {
            bool ready = true;
            for (auto& s : sentinels_) {
                auto m = s->raw().cmd({"SENTINEL", "master", "torture"});
                std::string slaves, others;
                for (std::size_t k = 0; k + 1 < m.elements.size(); k += 2) {
                    if (m.elements[k].str == "num-slaves") slaves = m.elements[k + 1].str;
                    if (m.elements[k].str == "num-other-sentinels") others = m.elements[k + 1].str;
                }
                ready = ready && slaves == "1" && others == "2";
            }
            if (ready) return;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        throw std::runtime_error("torture: the sentinels did not see each other within 30 s");
    }
    if (nodes_ > 1) {
        for (std::size_t i = 0; i < nodes_; ++i) {
            clocks_.push_back(std::make_unique<SteeredClock>(
                dir + "/node-" + std::to_string(i) + "-clock", CLOCK_REALTIME));
            servers_.push_back(std::make_unique<test::RedisServer>(args, clocks_.back()->env()));
        }
        for (int w = 0; w < workers; ++w)
            for (auto& s : servers_)
                proxies_.push_back(std::make_unique<test::TcpProxy>(s->port()));
        return;
    }
    clocks_.push_back(std::make_unique<SteeredClock>(dir + "/server-clock", CLOCK_REALTIME));
    for (int i = 0; i < (standby ? 2 : 1); ++i)
        servers_.push_back(std::make_unique<test::RedisServer>(args, clocks_.front()->env()));
    if (standby) {
        replication_ = std::make_unique<test::TcpProxy>(servers_[0]->port());
        follow(*servers_[1], *servers_[0]);
    }
    for (int i = 0; i < workers; ++i)
        proxies_.push_back(std::make_unique<test::TcpProxy>(servers_[0]->port()));
}

std::string LockSide::url_for(int worker) const {
    if (cluster_) return cluster_->url();
    if (!sentinels_.empty()) {
        std::string url = "redis-sentinel://";
        for (std::size_t i = 0; i < sentinels_.size(); ++i)
            url += (i ? ",127.0.0.1:" : "127.0.0.1:") + std::to_string(sentinels_[i]->port());
        return url + "/torture";
    }
    if (pg_) return pg_->url_via(proxies_[worker]->port());
    if (mariadb_) return mariadb_->url_via(proxies_[worker]->port());
    if (mc_) return "memcached://127.0.0.1:" + std::to_string(proxies_[worker]->port());
    if (nodes_ == 1) return proxies_[worker]->url();
    std::string url = etcd_ ? "etcd://" : zk_ ? "zk://" : "redlock://";
    for (std::size_t i = 0; i < nodes_; ++i)
        url += (i ? ",127.0.0.1:" : "127.0.0.1:") +
               std::to_string(proxies_[worker * nodes_ + i]->port());
    // ZooKeeper: the session is the lease, so it lasts the run's TTL.
    if (zk_) url += "?session_timeout=" + std::to_string(session_.count()) + "ms";
    return url;
}

std::vector<test::TcpProxy*> LockSide::proxies_of(int worker) {
    std::vector<test::TcpProxy*> out;
    if (proxies_.empty()) return out;  // sentinel mode: workers connect where they are told
    for (std::size_t i = 0; i < nodes_; ++i) out.push_back(proxies_[worker * nodes_ + i].get());
    return out;
}

LockSide::~LockSide() = default;

namespace {

template <class Members>
bool restart(Members& ms, bool leader, std::size_t pick, std::size_t n,
             std::chrono::milliseconds down) {
    int m = leader ? ms.leader() : static_cast<int>(pick % n);
    if (m < 0) return false;
    ms.stop(m);
    std::this_thread::sleep_for(down);
    ms.start(m);
    return true;
}

}  // namespace

bool LockSide::restart_member(bool leader, std::size_t pick, std::chrono::milliseconds down) {
#ifdef DEADBOLT_TORTURE_ZK
    if (zk_) return restart(*zk_, leader, pick, nodes_, down);
#endif
#ifdef DEADBOLT_TORTURE_ETCD
    if (etcd_) return restart(*etcd_, leader, pick, nodes_, down);
#endif
    (void)leader, (void)pick, (void)down;
    return false;
}

void LockSide::follow(test::RedisServer& replica, const test::RedisServer& primary) {
    replication_->retarget(primary.port());
    replication_->cut_all();
    auto raw = replica.raw();
    raw.cmd({"REPLICAOF", "127.0.0.1", std::to_string(replication_->port())});
    // A replica that has not synced yet would be promoted empty: wait for the link.
    for (int i = 0; i < 500; ++i) {
        auto info = raw.cmd({"INFO", "replication"}).str;
        if (info.find("master_link_status:up") != std::string::npos) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    throw std::runtime_error("torture: the standby did not sync with the primary within 5 s");
}

void LockSide::point_proxies(std::uint16_t port) {
    for (auto& p : proxies_) {
        p->retarget(port);
        p->cut_all();
    }
}

void LockSide::restart_primary(std::chrono::milliseconds down, std::size_t node) {
    if (mc_) {  // every item is forgotten
        mc_->stop();
        std::this_thread::sleep_for(down);
        mc_->start();
        for (auto& p : proxies_) p->cut_all();
        return;
    }
    if (pg_ || mariadb_) {  // every session ends, and with it every lock
        pg_ ? pg_->stop() : mariadb_->stop();
        std::this_thread::sleep_for(down);
        pg_ ? pg_->start() : mariadb_->start();
        for (auto& p : proxies_) p->cut_all();
        return;
    }
    if (nodes_ > 1) {
        auto& n = *servers_[node % nodes_];
        n.stop();
        std::this_thread::sleep_for(down);
        n.start();  // its proxies reconnect to the same port
        return;
    }
    auto& p = *servers_[primary_];
    p.stop();
    std::this_thread::sleep_for(down);
    p.start();  // the same port, unless another process took it meanwhile
    point_proxies(p.port());
    if (has_standby()) {
        replication_->retarget(p.port());
        replication_->cut_all();  // the standby reconnects (and resyncs) through it
    }
}

void LockSide::failover(std::chrono::milliseconds lag, std::chrono::milliseconds down) {
    if (!has_standby()) throw std::logic_error("torture: failover needs a standby");
    auto& old_primary = *servers_[primary_];
    auto& promoted = *servers_[1 - primary_];
    replication_->stall_replies(true);  // the primary's stream to the standby
    std::this_thread::sleep_for(lag);
    old_primary.pause();
    replication_->cut_all();
    replication_->stall_replies(false);
    promoted.raw().cmd({"REPLICAOF", "NO", "ONE"});
    point_proxies(promoted.port());
    primary_ = 1 - primary_;
    std::this_thread::sleep_for(down);
    old_primary.resume();
    follow(old_primary, promoted);
}

std::string LockSide::sentinel_primary() const {
    auto r = sentinels_.front()->raw().cmd({"SENTINEL", "get-master-addr-by-name", "torture"});
    return r.elements.size() == 2 ? r.elements[1].str : "";
}

bool LockSide::sentinel_failover(std::chrono::milliseconds down) {
    auto before = sentinel_primary();
    test::RedisServer* primary = nullptr;
    for (auto& s : servers_)
        if (std::to_string(s->port()) == before) primary = s.get();
    if (!primary) return false;
    primary->pause();  // like a crash, as far as the sentinels and clients can tell
    bool moved = false;
    for (int i = 0; i < 1000 && !moved; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        moved = sentinel_primary() != before;
    }
    std::this_thread::sleep_for(down);
    primary->resume();  // the sentinels turn it into the new primary's replica
    return moved;
}

bool LockSide::cluster_failover(std::chrono::milliseconds down) {
    auto& c = *cluster_;
    auto slot = c.slot("torture");
    auto m = c.master_of_slot(slot);
    auto r = c.replica_of(m);
    c.node(m).pause();  // like a crash, as far as the cluster and clients can tell
    c.alive[m] = false;
    bool moved = c.wait_ok(std::chrono::seconds(20), slot, static_cast<int>(r));
    std::this_thread::sleep_for(down);
    c.node(m).resume();
    c.alive[m] = true;
    // Back as the new master's replica, in sync, before the next fault may need it.
    for (int i = 0; i < 500; ++i) {
        try {
            if (c.replica_of(r) == m &&
                c.node(m).raw().cmd({"INFO", "replication"}).str.find("master_link_status:up") !=
                    std::string::npos)
                break;
        } catch (const std::exception&) {
            // Not a replica yet.
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return moved;
}

}  // namespace deadbolt::torture
