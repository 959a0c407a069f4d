#include "backends/mariadb/connect.hpp"

#include "backends/mariadb/conn.hpp"
#include "backends/mariadb/schema.hpp"
#include "backends/mariadb/store.hpp"
#include "backends/mariadb/url.hpp"
#include "client_access.hpp"
#include "deadbolt/error.hpp"

namespace deadbolt::detail {

Client connect_my(std::string_view url, const ClientOptions& options) {
    auto parsed = parse_my_url(url, options);
    if (!parsed.ok) throw UsageError(make_error_code(errc::invalid_url), parsed.error);
    std::shared_ptr<MyConn> first;
    MyConn::open(parsed, Clock::now() + parsed.options.connect_timeout, first).throw_if_error();
    {
        std::lock_guard lock(first->m);
        ensure_my_schema(*first, parsed, Clock::now() + parsed.options.command_timeout)
            .throw_if_error();
    }
    return ClientAccess::make(std::make_shared<ClientImpl>(parsed.options, [&](ClientImpl& c) {
        return std::make_shared<MyStore>(c, parsed, std::move(first));
    }));
}

}  // namespace deadbolt::detail
