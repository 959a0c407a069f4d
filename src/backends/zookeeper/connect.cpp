#include "backends/zookeeper/connect.hpp"

#include "backends/zookeeper/sessions.hpp"
#include "backends/zookeeper/store.hpp"
#include "backends/zookeeper/url.hpp"
#include "client_access.hpp"
#include "deadbolt/error.hpp"

namespace deadbolt::detail {

Client connect_zk(std::string_view url, const ClientOptions& options) {
    auto parsed = parse_zk_url(url, options);
    if (!parsed.ok) throw UsageError(make_error_code(errc::invalid_url), parsed.error);
    std::unique_ptr<ZkSessions> sessions;
    ZkSessions::open(parsed, sessions).throw_if_error();
    return ClientAccess::make(std::make_shared<ClientImpl>(parsed.options, [&](ClientImpl& c) {
        return std::make_shared<ZkStore>(c, std::move(sessions));
    }));
}

}  // namespace deadbolt::detail
