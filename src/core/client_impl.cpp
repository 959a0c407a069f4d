#include "core/client_impl.hpp"

#include "core/quorum.hpp"
#include "core/token.hpp"

namespace deadbolt::detail {

ClientImpl::ClientImpl(Endpoint e) : ClientImpl(e, std::make_shared<Nodes>(e)) {}

ClientImpl::ClientImpl(std::vector<Endpoint> redlock, bool fencing)
    : ClientImpl(redlock.front(), std::make_shared<Nodes>(redlock, fencing)) {}

ClientImpl::ClientImpl(Endpoint e, std::shared_ptr<Nodes> n)
    : ep(std::move(e)),
      id(random_token()),
      nodes(std::move(n)),
      conn(nodes->first()),
      renewer(std::make_shared<Renewer>(nodes, ep.options.command_timeout, ep.options.clock)) {}

ClientImpl::~ClientImpl() {
    if (sentinel) sentinel->stop();  // no more moves
    renewer->stop();
}

Clock::time_point ClientImpl::lease_deadline(std::chrono::milliseconds ttl) const {
    if (!nodes->redlock()) return deadline();
    return Clock::now() + node_timeout(ttl, ep.options.command_timeout);
}

Subscriber& ClientImpl::subscriber() {
    std::lock_guard lk(sub_m_);
    if (!sub_) {
        sub_ = std::make_unique<Subscriber>(ep);
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
    renewer->verify_all();
}

}  // namespace deadbolt::detail
