#include "core/client_impl.hpp"

#include "core/quorum.hpp"
#include "core/token.hpp"

namespace deadbolt::detail {

ClientImpl::ClientImpl(Endpoint e)
    : ep(std::move(e)),
      id(random_token()),
      nodes(std::make_shared<Nodes>(ep)),
      conn(nodes->first()),
      renewer(std::make_shared<Renewer>(nodes, ep.options.command_timeout, ep.options.clock)) {}

ClientImpl::ClientImpl(std::vector<Endpoint> redlock, bool fencing)
    : ep(redlock.front()),
      id(random_token()),
      nodes(std::make_shared<Nodes>(redlock, fencing)),
      conn(nodes->first()),
      renewer(std::make_shared<Renewer>(nodes, ep.options.command_timeout, ep.options.clock)) {}

ClientImpl::~ClientImpl() {
    renewer->stop();
}

Clock::time_point ClientImpl::lease_deadline(std::chrono::milliseconds ttl) const {
    if (!nodes->redlock()) return deadline();
    return Clock::now() + node_timeout(ttl, ep.options.command_timeout);
}

Subscriber& ClientImpl::subscriber() {
    std::call_once(sub_once_, [this] { sub_ = std::make_unique<Subscriber>(ep); });
    return *sub_;
}

}  // namespace deadbolt::detail
