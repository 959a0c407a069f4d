// deadbolt::metrics::Exporter: lists the engine's locks at a scrape (or reuses a listing
// younger than min_interval) and counts them into the census's families.
#include <fmt/format.h>

#include <functional>
#include <mutex>
#include <optional>

#include "deadbolt/error.hpp"
#include "deadbolt/metrics.hpp"
#include "metrics/census.hpp"
#include "metrics/openmetrics.hpp"

namespace deadbolt::detail {

struct ExporterState {
    ExporterState(std::function<Client()> c, metrics::ExporterOptions o)
        : connect(std::move(c)), options(std::move(o)) {}
    std::function<Client()> connect;  // called at a listing until it returns a client
    std::optional<Client> client;
    metrics::ExporterOptions options;
    std::mutex m;  // one listing at a time; scrapes that come meanwhile wait and share it
    Census census;
    std::chrono::steady_clock::time_point last{};  // when the last listing ended
    bool listed = false;
    std::string last_error;
};

}  // namespace deadbolt::detail

namespace deadbolt::metrics {

Exporter::Exporter(Client client, std::string_view engine, ExporterOptions options)
    : Exporter([c = std::move(client)] { return c; }, engine, std::move(options)) {}

Exporter::Exporter(std::function<Client()> connect, std::string_view engine,
                   ExporterOptions options) {
    if (!connect)
        throw UsageError(make_error_code(errc::invalid_argument),
                         "exporter: no way to connect was given");
    if (options.pattern.empty())
        throw UsageError(make_error_code(errc::invalid_argument),
                         "exporter: the pattern is empty: give a glob such as '*' or 'orders:*'");
    if (options.min_interval.count() < 0)
        throw UsageError(make_error_code(errc::invalid_argument),
                         "exporter: min_interval is negative: give 0 or more");
    detail::check_name_patterns(options.name_patterns, "exporter");
    s_ = std::make_shared<detail::ExporterState>(std::move(connect), std::move(options));
    s_->census.engine = engine;
    s_->census.name_patterns = s_->options.name_patterns;
}

std::string Exporter::text() const {
    std::lock_guard lk(s_->m);
    auto& c = s_->census;
    const auto start = std::chrono::steady_clock::now();
    if (!s_->listed || start - s_->last >= s_->options.min_interval) {
        ++c.listings;
        try {
            if (!s_->client) s_->client.emplace(s_->connect());  // an engine down at start
            c.locks = s_->client->list(s_->options.pattern, s_->options.include_foreign);
            c.up = true;
            s_->last_error.clear();
        } catch (const std::exception& e) {
            c.locks.clear();
            c.up = false;
            ++c.errors;
            s_->last_error = e.what();
        }
        c.listed_at = std::chrono::system_clock::now();
        s_->last = std::chrono::steady_clock::now();
        c.listing_seconds = std::chrono::duration<double>(s_->last - start).count();
        s_->listed = true;
    }
    ++c.scrapes;
    return detail::census_text(c);
}

std::string Exporter::last_error() const {
    std::lock_guard lk(s_->m);
    return s_->last_error;
}

}  // namespace deadbolt::metrics
