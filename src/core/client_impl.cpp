#include "core/client_impl.hpp"

#include "core/token.hpp"

namespace deadbolt::detail {

ClientImpl::ClientImpl(Endpoint e)
    : ep(std::move(e)),
      id(random_token()),
      conn(std::make_shared<Connection>(ep)),
      renewer(std::make_shared<Renewer>(conn, ep.options.command_timeout, ep.options.clock)) {}

ClientImpl::~ClientImpl() {
    renewer->stop();
}

Subscriber& ClientImpl::subscriber() {
    std::call_once(sub_once_, [this] { sub_ = std::make_unique<Subscriber>(ep); });
    return *sub_;
}

}  // namespace deadbolt::detail
