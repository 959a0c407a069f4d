#include "core/client_impl.hpp"

#include "backends/redis/store.hpp"

#include "core/quorum.hpp"
#include "core/token.hpp"

namespace deadbolt::detail {

namespace {

std::shared_ptr<Server> one_server(const std::shared_ptr<Connection>& c) {
    return std::make_shared<OneServer>(c);
}

}  // namespace

ClientImpl::ClientImpl(const Endpoint& e)
    : ClientImpl(e, std::make_shared<Connection>(e), {}, {}) {}

ClientImpl::ClientImpl(std::vector<Endpoint> redlock, bool fencing)
    : ClientImpl(redlock.front(), {}, {}, std::make_shared<Nodes>(redlock, fencing)) {}

ClientImpl::ClientImpl(std::vector<Endpoint> seeds, std::shared_ptr<Cluster> c)
    : ClientImpl(seeds.front(), {}, c, {}) {
    cluster = std::move(c);
}

// conn, server and nodes each follow from the one given: a server's connection makes a
// Server, a Server makes single-server Nodes, and Redlock's Nodes name their first node.
ClientImpl::ClientImpl(Endpoint e, std::shared_ptr<Connection> c, std::shared_ptr<Server> s,
                       std::shared_ptr<Nodes> n)
    : ep(std::move(e)),
      id(random_token()),
      conn(c   ? std::move(c)
           : n ? n->first()
               : nullptr),
      server(s ? std::move(s) : one_server(conn)),
      nodes(n ? std::move(n) : std::make_shared<Nodes>(server)),
      store(std::make_shared<RedisStore>(*this)),
      renewer(std::make_shared<Renewer>(store, ep.options.clock)) {
    store->on_doubt = [weak = std::weak_ptr<Renewer>(renewer)] {
        if (auto r = weak.lock()) r->verify_all();
    };
}

ClientImpl::~ClientImpl() {
    if (sentinel) sentinel->stop();  // no more moves
    if (cluster) cluster->stop();
    renewer->stop();
}

Clock::time_point ClientImpl::lease_deadline(std::chrono::milliseconds ttl) const {
    if (!nodes->redlock()) return deadline();
    return Clock::now() + node_timeout(ttl, ep.options.command_timeout);
}

Subscriber& ClientImpl::subscriber() {
    std::lock_guard lk(sub_m_);
    if (!sub_) {
        std::function<std::vector<Subscriber::Address>()> others;
        if (cluster) {  // every node carries every release message (cluster-wide PUBLISH)
            others = [weak = std::weak_ptr<Cluster>(cluster)] {
                std::vector<Subscriber::Address> out;
                if (auto c = weak.lock())
                    for (auto& a : c->nodes()) out.emplace_back(a.host, a.port);
                return out;
            };
        } else if (nodes->redlock()) {
            // Each Redlock node publishes the releases it took part in, so any node of the
            // holder's majority will do when the first is down.
            std::vector<Subscriber::Address> all;
            for (std::size_t i = 0; i < nodes->size(); ++i)
                all.emplace_back(nodes->node(i).endpoint().host, nodes->node(i).endpoint().port);
            others = [all] { return all; };
        }
        sub_ = std::make_unique<Subscriber>(ep, std::move(others));
        if (moved_port_ != 0) sub_->retarget(moved_host_, moved_port_);
    }
    return *sub_;
}

void ClientImpl::primary_moved(const std::string& host, std::uint16_t port) {
    {
        std::lock_guard lk(sub_m_);
        moved_host_ = host;
        moved_port_ = port;
        if (sub_) sub_->retarget(host, port);
    }
    conn->retarget(host, port);
    if (store->on_doubt) store->on_doubt();  // the new primary may not hold what we held
}

}  // namespace deadbolt::detail
