#include "backends/memcached/connect.hpp"

#include <fmt/format.h>

#include <charconv>

#include "backends/memcached/keys.hpp"
#include "backends/memcached/nodes.hpp"
#include "backends/memcached/store.hpp"
#include "backends/memcached/url.hpp"
#include "client_access.hpp"
#include "core/quorum.hpp"
#include "deadbolt/error.hpp"

namespace deadbolt::detail {
namespace {

std::string stat(const std::vector<std::pair<std::string, std::string>>& stats,
                 std::string_view name) {
    for (const auto& [k, v] : stats)
        if (k == name) return v;
    return {};
}

// Whether version text ("1.6.18") is 1.6 or later: the meta commands came with 1.6.
bool has_meta(const std::string& version) {
    int major = 0, minor = 0;
    auto dot = version.find('.');
    if (dot == std::string::npos) return false;
    std::from_chars(version.data(), version.data() + dot, major);
    std::from_chars(version.data() + dot + 1, version.data() + version.size(), minor);
    return major > 1 || (major == 1 && minor >= 6);
}

}  // namespace

Client connect_mc(std::string_view url, const ClientOptions& options) {
    auto parsed = parse_mc_url(url, options);
    if (!parsed.ok) throw UsageError(make_error_code(errc::invalid_url), parsed.error);
    if (!mc_prefix_ok(parsed.options.key_prefix))
        throw UsageError(make_error_code(errc::invalid_argument),
                         "a memcached key prefix must be printable, without spaces, and at most "
                         "64 bytes: memcached's keys are text");
    auto nodes = std::make_unique<McNodes>(parsed.servers, parsed.options.connect_timeout);
    const auto n = nodes->size();
    std::vector<std::int64_t> times(n, 0);
    std::vector<std::string> warnings;
    int reached = 0;
    Status why;
    for (std::size_t i = 0; i < n; ++i) {
        auto by = Clock::now() + parsed.options.connect_timeout + parsed.options.command_timeout;
        std::vector<std::pair<std::string, std::string>> stats, settings;
        Status st = nodes->stats(i, "", by, stats);
        if (st.ok()) st = nodes->stats(i, "settings", by, settings);
        if (!st.ok()) {
            if (why.ok()) why = st;
            continue;
        }
        auto version = stat(stats, "version");
        if (!has_meta(version))
            throw UsageError(make_error_code(errc::invalid_argument),
                             fmt::format("memcached at {} is version {}: deadbolt needs 1.6 or "
                                         "later (its meta commands compare-and-delete a lock)",
                                         nodes->server(i).describe(), version));
        std::from_chars(stat(stats, "time").data(),
                        stat(stats, "time").data() + stat(stats, "time").size(), times[i]);
        ++reached;
        if (stat(settings, "evictions") == "on" && !parsed.allow_evictions)
            warnings.push_back(fmt::format(
                "memcached at {} evicts items when its memory is full (it runs without -M): "
                "a held lock can be dropped and taken by another holder; run it with -M (or "
                "give it memory to spare and add ?allow_evictions=true to the URL)",
                nodes->server(i).describe()));
    }
    if (reached < majority(static_cast<int>(n))) why.throw_if_error();
    // A server not reached yet draws fences from the others' clock.
    std::int64_t latest = 0;
    for (auto t : times) latest = std::max(latest, t);
    for (auto& t : times)
        if (t == 0) t = latest;
    auto impl = std::make_shared<ClientImpl>(parsed.options, [&](ClientImpl& c) {
        return std::make_shared<McStore>(c, std::move(nodes), std::move(times));
    });
    impl->warnings = std::move(warnings);
    return ClientAccess::make(std::move(impl));
}

}  // namespace deadbolt::detail
