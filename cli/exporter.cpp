// deadbolt exporter: /metrics for every lock on an engine, whoever holds it, listed at each
// scrape (deadbolt::metrics::Exporter) and served until SIGINT or SIGTERM.
#include <fmt/format.h>
#include <signal.h>

#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include "commands.hpp"
#include "common.hpp"
#include "deadbolt/metrics.hpp"
#include "engines.hpp"
#include "signals.hpp"

namespace deadbolt::cli {

void add_exporter_command(CLI::App& app, ExporterArgs& a) {
    auto* cmd = app.add_subcommand(
        "exporter", "Serve Prometheus metrics of every lock on the engine, whoever holds it");
    add_url_option(*cmd, a.url);
    cmd->add_option("--listen", a.listen, "HOST:PORT to serve /metrics on (port 0: any free one)")
        ->capture_default_str();
    cmd->add_option("--pattern", a.pattern, "Glob over the lock names looked at")
        ->capture_default_str();
    cmd->add_option("--names", a.names,
                    "Glob that lock names count under as a `name` label (repeat it; names that "
                    "match none count as \"other\"); default: no name label");
    cmd->add_option("--min-interval", a.min_interval,
                    "Scrapes closer together than this share one listing")
        ->capture_default_str();
    cmd->add_flag("--all", a.all,
                  "Also count plain strings and numbers deadbolt did not write (redis-py locks "
                  "look like that)");
    cmd->footer(
        "Each listing is `deadbolt list`'s: on Redis one SCAN ... COUNT 1000 per thousand keys "
        "per node and one pipelined round of status scripts; on the other engines one range "
        "or directory read plus one status per lock. Families: deadbolt_locks, "
        "deadbolt_lock_holders, deadbolt_lock_waiters, deadbolt_lock_oldest_holding_seconds, "
        "deadbolt_lock_fence_max, deadbolt_exporter_*.\nExamples:\n  deadbolt exporter --url "
        "redis://127.0.0.1:6379 --listen 0.0.0.0:9465\n  deadbolt exporter --url "
        "etcd://127.0.0.1:2379 --names 'orders:*' --names 'jobs:*'\n");
}

int exporter_command(const ExporterArgs& a) {
    metrics::ExporterOptions options;
    options.pattern = a.pattern;
    options.name_patterns = a.names;
    options.include_foreign = a.all;
    options.min_interval = duration_arg("--min-interval", a.min_interval);
    std::string engine(engine_for(a.url));
    // An engine that cannot be reached now is served as deadbolt_exporter_up 0 (and connected
    // to again at each listing), as exporters do; a URL that can never work is a usage error.
    std::optional<Client> first;
    try {
        first.emplace(connect(a.url));
    } catch (const UsageError&) {
        throw;
    } catch (const UsageProblem&) {
        throw;
    } catch (const std::exception&) {  // said at the first scrape, as a listing's failure
    }
    metrics::Exporter exporter(
        [url = a.url, first = std::move(first)]() mutable {
            if (!first) return connect(url);
            auto c = std::move(*first);
            first.reset();
            return c;
        },
        engine.empty() ? "unknown" : engine, options);
    SignalPipe signals({SIGINT, SIGTERM});
    // A listing's failure (and the recovery after it) is said once on stderr, not per scrape.
    auto said = std::make_shared<std::pair<std::mutex, std::string>>();
    metrics::Endpoint endpoint(
        [exporter, said] {
            auto text = exporter.text();
            auto error = exporter.last_error();
            std::lock_guard lk(said->first);
            if (error != said->second) {
                if (!error.empty())
                    fmt::print(stderr, "deadbolt exporter: the listing failed: {}\n", error);
                else
                    fmt::print(stderr, "deadbolt exporter: the listing works again\n");
                said->second = error;
            }
            return text;
        },
        a.listen);
    auto colon = a.listen.rfind(':');
    fmt::print("deadbolt exporter: serving http://{}:{}/metrics for {} (locks '{}')\n",
               a.listen.substr(0, colon), endpoint.port(), engine, a.pattern);
    std::fflush(stdout);
    signals.next(true);  // SIGINT or SIGTERM: the endpoint stops in order as this returns
    return kOk;
}

}  // namespace deadbolt::cli
