#include "redis_cluster.hpp"

#include <stdexcept>
#include <thread>

namespace deadbolt::test {
namespace {

// The value of "name:value" in an INFO-style text.
std::string info_field(const std::string& text, const std::string& name) {
    auto at = text.find(name + ":");
    if (at == std::string::npos) return {};
    auto start = at + name.size() + 1;
    return text.substr(start, text.find_first_of("\r\n", start) - start);
}

template <class F>
bool poll(F f, std::chrono::milliseconds within) {
    for (auto until = std::chrono::steady_clock::now() + within;
         std::chrono::steady_clock::now() < until;) {
        if (f()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return f();
}

}  // namespace

RedisCluster::RedisCluster(std::chrono::milliseconds node_timeout) : alive(6, true) {
    for (int i = 0; i < 6; ++i)
        nodes_.push_back(std::make_unique<RedisServer>(std::vector<std::string>{
            "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
            "--cluster-node-timeout", std::to_string(node_timeout.count()), "--cluster-port",
            std::to_string(free_port()), "--repl-diskless-sync-delay", "0",
            // A promoted replica must not wait for an old replica-validity window.
            "--cluster-replica-validity-factor", "0"}));
    std::vector<std::string> argv{"redis-cli", "--cluster", "create"};
    for (auto& n : nodes_) argv.push_back("127.0.0.1:" + std::to_string(n->port()));
    argv.insert(argv.end(), {"--cluster-replicas", "1", "--cluster-yes"});
    std::string out;
    if (run_command(argv, &out) != 0)
        throw std::runtime_error("redis-cli --cluster create failed: " + out);
    bool synced = poll(
        [&] {
            if (!wait_ok(std::chrono::milliseconds(0))) return false;
            for (std::size_t i = 0; i < nodes_.size(); ++i) {
                auto info = nodes_[i]->raw().cmd({"INFO", "replication"}).str;
                if (info_field(info, "role") == "slave" &&
                    info_field(info, "master_link_status") != "up")
                    return false;
            }
            return masters().size() == 3;
        },
        std::chrono::seconds(30));
    if (!synced) throw std::runtime_error("the cluster never became ok with replicas in sync");
}

std::string RedisCluster::url(const std::string& query) const {
    return "redis-cluster://127.0.0.1:" + std::to_string(nodes_[0]->port()) +
           ",127.0.0.1:" + std::to_string(nodes_[1]->port()) + (query.empty() ? "" : "?" + query);
}

RawReply RedisCluster::any(const std::vector<std::string>& argv) {
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        if (!alive[i]) continue;
        auto r = nodes_[i]->raw().cmd(argv);
        if (r.type != RawReply::error_t) return r;
    }
    throw std::runtime_error("no cluster node answered " + argv.front());
}

std::uint16_t RedisCluster::slot(const std::string& key) {
    return static_cast<std::uint16_t>(any({"CLUSTER", "KEYSLOT", key}).integer);
}

std::size_t RedisCluster::master_of_slot(std::uint16_t slot) {
    auto slots = any({"CLUSTER", "SLOTS"});
    for (auto& range : slots.elements) {
        if (slot < range.elements[0].integer || slot > range.elements[1].integer) continue;
        auto port = range.elements[2].elements[1].integer;
        for (std::size_t i = 0; i < nodes_.size(); ++i)
            if (nodes_[i]->port() == port) return i;
    }
    throw std::runtime_error("no master serves slot " + std::to_string(slot));
}

std::size_t RedisCluster::replica_of(std::size_t m) {
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        if (!alive[i] || i == m) continue;
        auto info = nodes_[i]->raw().cmd({"INFO", "replication"}).str;
        if (info_field(info, "role") == "slave" &&
            info_field(info, "master_port") == std::to_string(nodes_[m]->port()))
            return i;
    }
    throw std::runtime_error("master has no replica");
}

std::vector<std::size_t> RedisCluster::masters() {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < nodes_.size(); ++i)
        if (alive[i] &&
            info_field(nodes_[i]->raw().cmd({"INFO", "replication"}).str, "role") == "master")
            out.push_back(i);
    return out;
}

std::string RedisCluster::id(std::size_t i) {
    return nodes_[i]->raw().cmd({"CLUSTER", "MYID"}).str;
}

bool RedisCluster::wait_ok(std::chrono::milliseconds within, int slot, int master) {
    return poll(
        [&] {
            for (std::size_t i = 0; i < nodes_.size(); ++i) {
                if (!alive[i]) continue;
                auto info = nodes_[i]->raw().cmd({"CLUSTER", "INFO"}).str;
                if (info_field(info, "cluster_state") != "ok") return false;
            }
            return slot < 0 || master_of_slot(static_cast<std::uint16_t>(slot)) ==
                                   static_cast<std::size_t>(master);
        },
        within);
}

void RedisCluster::migrate_begin(std::uint16_t slot, std::size_t from, std::size_t to) {
    auto s = std::to_string(slot);
    nodes_[to]->raw().cmd({"CLUSTER", "SETSLOT", s, "IMPORTING", id(from)});
    nodes_[from]->raw().cmd({"CLUSTER", "SETSLOT", s, "MIGRATING", id(to)});
}

void RedisCluster::migrate_keys(std::uint16_t slot, std::size_t from, std::size_t to) {
    auto src = nodes_[from]->raw();
    auto keys = src.cmd({"CLUSTER", "GETKEYSINSLOT", std::to_string(slot), "1000"});
    if (keys.elements.empty()) return;
    std::vector<std::string> argv{
        "MIGRATE", "127.0.0.1", std::to_string(nodes_[to]->port()), "", "0", "5000", "KEYS"};
    for (auto& k : keys.elements) argv.push_back(k.str);
    auto r = src.cmd(argv);
    if (r.type == RawReply::error_t) throw std::runtime_error("MIGRATE failed: " + r.str);
}

void RedisCluster::migrate_end(std::uint16_t slot, std::size_t to) {
    auto s = std::to_string(slot);
    auto owner = id(to);
    // The new owner first, then the old one, then the rest (as redis-cli does).
    nodes_[to]->raw().cmd({"CLUSTER", "SETSLOT", s, "NODE", owner});
    for (std::size_t i = 0; i < nodes_.size(); ++i)
        if (alive[i] && i != to) nodes_[i]->raw().cmd({"CLUSTER", "SETSLOT", s, "NODE", owner});
}

}  // namespace deadbolt::test
