// ClientAccess: the one way past Client's public face, for the library's own code: an engine
// makes the Client of the ClientImpl it connected, the asynchronous API reaches that impl.
#pragma once

#include <memory>
#include <utility>

#include "deadbolt/client.hpp"

namespace deadbolt::detail {

struct ClientAccess {
    /// The Client handle of a client an engine connected.
    static Client make(std::shared_ptr<ClientImpl> impl) { return Client(std::move(impl)); }
    static const std::shared_ptr<ClientImpl>& impl(const Client& c) { return c.impl_; }
};

}  // namespace deadbolt::detail
