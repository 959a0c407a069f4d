#include "backends/etcd/connect.hpp"

#include "backends/etcd/store.hpp"
#include "backends/etcd/url.hpp"
#include "client_access.hpp"
#include "deadbolt/error.hpp"

namespace deadbolt::detail {

Client connect_etcd(std::string_view url, const ClientOptions& options) {
    auto parsed = parse_etcd_url(url, options);
    if (!parsed.ok) throw UsageError(make_error_code(errc::invalid_url), parsed.error);
    std::shared_ptr<EtcdChannel> ch;
    EtcdChannel::open(parsed, ch).throw_if_error();
    return ClientAccess::make(std::make_shared<ClientImpl>(
        parsed.options, [&](ClientImpl& c) { return std::make_shared<EtcdStore>(c, ch); }));
}

}  // namespace deadbolt::detail
