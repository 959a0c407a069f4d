#include "backends/postgres/connect.hpp"

#include "backends/postgres/schema.hpp"
#include "backends/postgres/store.hpp"
#include "backends/postgres/url.hpp"
#include "client_access.hpp"
#include "deadbolt/error.hpp"

namespace deadbolt::detail {

Client connect_pg(std::string_view url, const ClientOptions& options) {
    auto parsed = parse_pg_url(url, options);
    if (!parsed.ok) throw UsageError(make_error_code(errc::invalid_url), parsed.error);
    std::shared_ptr<PgConn> first;
    PgConn::open(parsed, Clock::now() + parsed.options.connect_timeout, first).throw_if_error();
    {
        std::lock_guard lock(first->m);
        ensure_schema(*first, parsed.schema, Clock::now() + parsed.options.command_timeout)
            .throw_if_error();
    }
    return ClientAccess::make(std::make_shared<ClientImpl>(parsed.options, [&](ClientImpl& c) {
        return std::make_shared<PgStore>(c, parsed, std::move(first));
    }));
}

}  // namespace deadbolt::detail
