// The OpenMetrics text of the counts: a family's metadata (TYPE, UNIT, HELP), then one sample
// line per series an event touched, then "# EOF". Counters' samples end in _total, histograms'
// in _bucket (cumulative, le), _count and _sum (seconds).
#include <fmt/format.h>

#include <iterator>

#include "metrics/openmetrics.hpp"
#include "metrics/state.hpp"

namespace deadbolt::detail {
namespace {

struct Series {
    const LockCounts* counts;
    std::string labels;  // engine, primitive[, name], without braces
};

void histogram(std::string& out, std::string_view name, const std::string& labels,
               const AtomicHistogram& h, const std::vector<double>& bounds) {
    std::uint64_t below = 0;
    for (std::size_t i = 0; i < h.size(); ++i) {
        below += h.bucket(i);
        if (i < bounds.size())
            fmt::format_to(std::back_inserter(out), "{}_bucket{{{},le=\"{}\"}} {}\n", name, labels,
                           bounds[i], below);
        else
            fmt::format_to(std::back_inserter(out), "{}_bucket{{{},le=\"+Inf\"}} {}\n", name,
                           labels, below);
    }
    // The count is the +Inf bucket's, read once: a scrape during an observation stays coherent.
    fmt::format_to(std::back_inserter(out), "{}_count{{{}}} {}\n{}_sum{{{}}} {}\n", name, labels,
                   below, name, labels, static_cast<double>(h.sum_ns()) / 1e9);
}

}  // namespace

std::string metrics_text(MetricsState& s) {
    std::vector<std::shared_ptr<EngineCounts>> engines;
    {
        std::lock_guard lk(s.m);
        engines = s.engines;
    }
    const auto& patterns = s.options.name_patterns;
    const auto& bounds = s.options.buckets;
    std::vector<Series> all;
    for (const auto& ec : engines)
        for (std::size_t p = 0; p < kPrimitiveCount; ++p)
            for (std::size_t n = 0; n <= patterns.size(); ++n) {
                const LockCounts& c = *ec->cells[p * (patterns.size() + 1) + n];
                if (!c.seen.load(std::memory_order_relaxed)) continue;
                std::string labels = fmt::format("engine=\"{}\",primitive=\"{}\"",
                                                 label_value(ec->engine), kPrimitives[p]);
                labels += name_label(patterns, n);
                all.push_back({&c, std::move(labels)});
            }
    std::string out;
    family(out, "deadbolt_acquire_seconds", "histogram", "seconds",
           "Time from the start of an acquisition to its end, by outcome.");
    for (const auto& x : all)
        for (std::size_t o = 0; o < kOutcomeCount; ++o)
            if (x.counts->acquire[o]->count() > 0)
                histogram(out, "deadbolt_acquire_seconds",
                          fmt::format("{},outcome=\"{}\"", x.labels, kOutcomes[o]),
                          *x.counts->acquire[o], bounds);
    family(out, "deadbolt_held_seconds", "histogram", "seconds",
           "Time from a grant to the lease's release or loss.");
    for (const auto& x : all)
        if (x.counts->held.count() > 0)
            histogram(out, "deadbolt_held_seconds", x.labels, x.counts->held, bounds);
    family(out, "deadbolt_holding", "gauge", "", "Leases held now.");
    for (const auto& x : all)
        fmt::format_to(std::back_inserter(out), "deadbolt_holding{{{}}} {}\n", x.labels,
                       x.counts->holding.load(std::memory_order_relaxed));
    family(out, "deadbolt_waiting", "gauge", "", "Acquisitions waiting for their lock now.");
    for (const auto& x : all)
        fmt::format_to(std::back_inserter(out), "deadbolt_waiting{{{}}} {}\n", x.labels,
                       x.counts->waiting.load(std::memory_order_relaxed));
    family(out, "deadbolt_lost", "counter", "", "Leases lost (on_lost fired).");
    for (const auto& x : all)
        fmt::format_to(std::back_inserter(out), "deadbolt_lost_total{{{}}} {}\n", x.labels,
                       x.counts->lost.load(std::memory_order_relaxed));
    family(out, "deadbolt_renewals", "counter", "", "Renewals, by result.");
    for (const auto& x : all) {
        fmt::format_to(std::back_inserter(out),
                       "deadbolt_renewals_total{{{},result=\"renewed\"}} {}\n", x.labels,
                       x.counts->renewed.load(std::memory_order_relaxed));
        fmt::format_to(std::back_inserter(out),
                       "deadbolt_renewals_total{{{},result=\"failed\"}} {}\n", x.labels,
                       x.counts->renew_failed.load(std::memory_order_relaxed));
    }
    family(out, "deadbolt_unknown_outcomes", "counter", "",
           "Attempts whose reply was lost (cleaned up by the client).");
    for (const auto& x : all)
        fmt::format_to(std::back_inserter(out), "deadbolt_unknown_outcomes_total{{{}}} {}\n",
                       x.labels, x.counts->unknown.load(std::memory_order_relaxed));
    out += "# EOF\n";
    return out;
}

}  // namespace deadbolt::detail
