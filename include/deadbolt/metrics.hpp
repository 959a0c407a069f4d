// Lock metrics for Prometheus (link deadbolt::metrics): an observer that counts every client's
// lock events into OpenMetrics families, their text for a server of the application's own,
// and a /metrics endpoint of ours.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "deadbolt/client.hpp"
#include "deadbolt/events.hpp"

namespace deadbolt {
namespace detail {
struct MetricsState;
struct ExporterState;
class MetricsServer;
}  // namespace detail

namespace metrics {

/// How the events are counted.
struct Options {
    /// Lock names become a `name` label only through these glob patterns (Client::list's
    /// syntax, e.g. "orders:*"): a name counts under the first pattern it matches, else under
    /// "other". Names are unbounded and a label's values must not be. Empty: no name label.
    std::vector<std::string> name_patterns{};
    /// The histograms' bucket bounds in seconds, ascending (+Inf is added).
    std::vector<double> buckets{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                0.5,    1,     2.5,    5,     10,   30,    60,   300};
};

/// One series of a Registry as read at one moment: what a bridge to another metrics system
/// needs (an OpenTelemetry MetricProducer or asynchronous instrument, StatsD), with the
/// families, labels and values that Registry::text() shows.
struct Sample {
    enum class Type { counter, gauge, histogram };
    std::string_view family;  ///< "deadbolt_acquire_seconds"; a counter's without "_total"
    Type type = Type::gauge;
    std::string_view unit;  ///< "seconds", or empty
    std::string_view help;
    /// engine, primitive, name (with name patterns), then outcome or result; values as they
    /// are, not escaped.
    std::vector<std::pair<std::string_view, std::string_view>> labels;
    double value = 0;  ///< A counter's or gauge's value.
    /// A histogram's upper bounds in seconds, ascending (+Inf follows them), and its counts
    /// per bucket, not cumulative: bounds.size() + 1 of them, as OpenTelemetry's
    /// explicit-bucket histograms take them.
    std::span<const double> bounds;
    std::vector<std::uint64_t> counts;
    std::uint64_t count = 0;  ///< A histogram's observations (the sum of counts).
    double sum = 0;           ///< Their sum, in seconds.
};

/// The lock metrics of a process, in these families (OpenMetrics names and units):
///   deadbolt_acquire_seconds{engine,primitive,outcome}  histogram: start to end of each
///       acquisition; outcome granted, refused (gave up without waiting), timeout (waited to
///       its deadline), cancelled, unknown (an unanswered attempt), error
///   deadbolt_held_seconds{engine,primitive}             histogram: grant to release or loss
///   deadbolt_holding{engine,primitive}                  gauge: leases held now
///   deadbolt_waiting{engine,primitive}                  gauge: acquisitions waiting now
///   deadbolt_lost_total{engine,primitive}               counter: leases lost
///   deadbolt_renewals_total{engine,primitive,result}    counter: renewed, failed
///   deadbolt_unknown_outcomes_total{engine,primitive}   counter: attempts whose reply was lost
/// plus a `name` label on each when Options::name_patterns is set. Counting takes no lock and
/// allocates nothing (with patterns: once a thread's name buffer fits its longest name); a copy
/// shares the counts.
class Registry {
  public:
    /// Throws UsageError for buckets that are empty, not ascending or not positive.
    explicit Registry(Options options = {});

    /// An observer for ClientOptions::observer that counts the client's events under the
    /// engine label engine ("redis", "etcd", ...) and then calls next (when set). Never throws
    /// while counting.
    LockObserver observer(std::string_view engine, LockObserver next = {}) const;

    /// Every family in the OpenMetrics text format, ending with "# EOF".
    std::string text() const;
    /// Calls each with every series text() shows, family by family, read as each is reached
    /// (a Sample and what it points to live until each returns). What each throws is thrown.
    void collect(const std::function<void(const Sample&)>& each) const;
    /// The HTTP Content-Type of text().
    static constexpr const char* kContentType =
        "application/openmetrics-text; version=1.0.0; charset=utf-8";

  private:
    std::shared_ptr<detail::MetricsState> s_;
};

/// What an Exporter lists, and how often.
struct ExporterOptions {
    std::string pattern = "*";  ///< Client::list's glob: the locks looked at.
    /// Lock names become a `name` label through these glob patterns, as Options::name_patterns.
    std::vector<std::string> name_patterns{};
    /// Client::list's include_foreign: on Redis, plain strings another tool wrote (redis-py's
    /// locks look like that, and so does any other string under the pattern).
    bool include_foreign = false;
    /// Scrapes closer together than this share one listing, so that the engine's cost is
    /// bounded by time, not by how many Prometheus servers scrape.
    std::chrono::milliseconds min_interval{1000};
};

/// Every lock on an engine, whoever holds it (deadbolt, redis-py, etcdctl, Kazoo, psql,
/// GET_LOCK), as OpenMetrics families, from one Client::list per scrape (at most one per
/// min_interval):
///   deadbolt_locks{engine,kind}                        gauge: locks held now
///   deadbolt_lock_holders{engine,kind}                 gauge: their holders (readers, permits)
///   deadbolt_lock_waiters{engine,kind}                 gauge: waiters in line
///   deadbolt_lock_oldest_holding_seconds{engine,kind}  gauge: the oldest grant's age
///   deadbolt_lock_fence_max{engine}                    gauge: the highest fence among them
///   deadbolt_exporter_up{engine}                       gauge: the last listing succeeded
///   deadbolt_exporter_listing_seconds{engine}          gauge: how long it took
///   deadbolt_exporter_listings_total, _listing_errors_total, _scrapes_total{engine}
/// with a `name` label as ExporterOptions::name_patterns say. A copy shares the state.
class Exporter {
  public:
    /// Lists through client; engine is the label ("redis", "etcd", ...). Throws UsageError
    /// for an empty pattern, a min_interval below zero, or a name pattern given twice or
    /// spelled "other".
    Exporter(Client client, std::string_view engine, ExporterOptions options = {});
    /// The same, connecting at a listing through connect (again at each listing while it
    /// throws): an engine that is down when the exporter starts is reported as
    /// deadbolt_exporter_up 0 with connect's error, and counted once it answers. Throws as
    /// above, and UsageError for an empty connect.
    Exporter(std::function<Client()> connect, std::string_view engine,
             ExporterOptions options = {});

    /// The families at this moment (listing again when the last listing is older than
    /// min_interval). Never throws for the engine's failures: a listing that fails sets
    /// deadbolt_exporter_up to 0, drops the lock families, and its error is last_error().
    std::string text() const;
    /// Why the last listing failed; empty when it succeeded.
    std::string last_error() const;

  private:
    std::shared_ptr<detail::ExporterState> s_;
};

/// GET /metrics on an address of the process's own, serving a registry's or an exporter's
/// text() (civetweb; two threads). Stops when destroyed.
class Endpoint {
  public:
    /// Listens on listen ("127.0.0.1:9464", "0.0.0.0:9464", port 0 for any free one). Throws
    /// UsageError for a malformed address, ConnectionError when it cannot listen there (in
    /// use, no right).
    Endpoint(const Registry& registry, std::string_view listen);
    /// The same, serving an exporter's text().
    Endpoint(const Exporter& exporter, std::string_view listen);
    /// The same, serving what text returns at each GET (a 500 when it throws).
    Endpoint(std::function<std::string()> text, std::string_view listen);
    ~Endpoint();
    Endpoint(const Endpoint&) = delete;
    Endpoint& operator=(const Endpoint&) = delete;

    /// The port it listens on (the one chosen when asked for 0).
    std::uint16_t port() const noexcept;

  private:
    std::unique_ptr<detail::MetricsServer> server_;
};

}  // namespace metrics
}  // namespace deadbolt
