#include "backends/memory/connect.hpp"

#include "backends/memory/store.hpp"
#include "backends/memory/url.hpp"
#include "client_access.hpp"
#include "deadbolt/error.hpp"

namespace deadbolt::detail {

Client connect_memory(std::string_view url, const ClientOptions& options) {
    auto parsed = parse_memory_url(url, options);
    if (!parsed.ok) throw UsageError(make_error_code(errc::invalid_url), parsed.error);
    auto space = MemorySpace::named(parsed.space);
    // Leases measured on the space's clock: advance() ends their validity as it ends the
    // holdings, so a test sees a lease run out without waiting for it.
    if (!parsed.options.clock)
        parsed.options.clock = [weak = std::weak_ptr<MemorySpace>(space)] {
            auto s = weak.lock();
            return s ? s->now() : Clock::now();
        };
    return ClientAccess::make(std::make_shared<ClientImpl>(
        parsed.options, [&](ClientImpl& c) { return std::make_shared<MemoryStore>(c, space); }));
}

}  // namespace deadbolt::detail
