// The counts as series (metrics::Sample), family by family, and the OpenMetrics text of them: a
// family's metadata (TYPE, UNIT, HELP), then one sample line per series an event touched, then
// "# EOF". Counters' samples end in _total, histograms' in _bucket (cumulative, le), _count and
// _sum (seconds).
#include <fmt/format.h>

#include <iterator>

#include "metrics/openmetrics.hpp"
#include "metrics/state.hpp"

namespace deadbolt::detail {
namespace {

using metrics::Sample;
using Type = Sample::Type;

struct Family {
    std::string_view name;
    Type type;
    std::string_view unit, help;
};
enum : std::size_t {
    kAcquireFamily,
    kHeldFamily,
    kHoldingFamily,
    kWaitingFamily,
    kLostFamily,
    kRenewalsFamily,
    kUnknownFamily,
    kFamilies
};
constexpr Family kFamily[kFamilies] = {
    {"deadbolt_acquire_seconds", Type::histogram, "seconds",
     "Time from the start of an acquisition to its end, by outcome."},
    {"deadbolt_held_seconds", Type::histogram, "seconds",
     "Time from a grant to the lease's release or loss."},
    {"deadbolt_holding", Type::gauge, "", "Leases held now."},
    {"deadbolt_waiting", Type::gauge, "", "Acquisitions waiting for their lock now."},
    {"deadbolt_lost", Type::counter, "", "Leases lost (on_lost fired)."},
    {"deadbolt_renewals", Type::counter, "", "Renewals, by result."},
    {"deadbolt_unknown_outcomes", Type::counter, "",
     "Attempts whose reply was lost (cleaned up by the client)."},
};

constexpr const char* kTypeNames[] = {"counter", "gauge", "histogram"};  // by Sample::Type

// One (engine, primitive, name pattern) whose counts an event touched.
struct Cell {
    const LockCounts* counts;
    std::string_view engine, primitive, name;  // name: empty without patterns
};

struct Emit {
    const std::function<void(const Sample&)>& each;
    Sample s;

    Sample& start(std::size_t f, const Cell& c) {
        s.family = kFamily[f].name;
        s.type = kFamily[f].type;
        s.unit = kFamily[f].unit;
        s.help = kFamily[f].help;
        s.value = 0;  // what the last series had is not this one's
        s.count = 0;
        s.sum = 0;
        s.bounds = {};
        s.counts.clear();
        s.labels.clear();
        s.labels.emplace_back("engine", c.engine);
        s.labels.emplace_back("primitive", c.primitive);
        if (!c.name.empty()) s.labels.emplace_back("name", c.name);
        return s;
    }
    void value(std::size_t f, const Cell& c, double v) {
        start(f, c).value = v;
        each(s);
    }
    void histogram(std::size_t f, const Cell& c, const AtomicHistogram& h,
                   const std::vector<double>& bounds, std::string_view outcome = {}) {
        start(f, c);
        if (!outcome.empty()) s.labels.emplace_back("outcome", outcome);
        s.bounds = bounds;
        s.counts.resize(h.size());
        // The count is the buckets' sum, each read once: a read during an observation stays
        // coherent (no +Inf bucket below the one before it).
        for (std::size_t i = 0; i < h.size(); ++i) s.count += s.counts[i] = h.bucket(i);
        s.sum = static_cast<double>(h.sum_ns()) / 1e9;
        each(s);
    }
};

std::string labels_text(const Sample& s) {
    std::string out;
    for (const auto& [k, v] : s.labels)
        fmt::format_to(std::back_inserter(out), "{}{}=\"{}\"", out.empty() ? "" : ",", k,
                       label_value(v));
    return out;
}

void sample_text(std::string& out, const Sample& s) {
    auto labels = labels_text(s);
    if (s.type == Type::counter) {
        fmt::format_to(std::back_inserter(out), "{}_total{{{}}} {}\n", s.family, labels, s.value);
    } else if (s.type == Type::gauge) {
        fmt::format_to(std::back_inserter(out), "{}{{{}}} {}\n", s.family, labels, s.value);
    } else {
        std::uint64_t below = 0;
        for (std::size_t i = 0; i < s.counts.size(); ++i) {
            below += s.counts[i];
            auto le = i < s.bounds.size() ? fmt::format("{}", s.bounds[i]) : std::string("+Inf");
            fmt::format_to(std::back_inserter(out), "{}_bucket{{{},le=\"{}\"}} {}\n", s.family,
                           labels, le, below);
        }
        fmt::format_to(std::back_inserter(out), "{}_count{{{}}} {}\n{}_sum{{{}}} {}\n", s.family,
                       labels, s.count, s.family, labels, s.sum);
    }
}

}  // namespace

void metrics_collect(MetricsState& s, const std::function<void(const Sample&)>& each) {
    std::vector<std::shared_ptr<EngineCounts>> engines;
    {
        std::lock_guard lk(s.m);
        engines = s.engines;
    }
    const auto& patterns = s.options.name_patterns;
    const auto& bounds = s.options.buckets;
    static constexpr std::string_view kOther = "other";
    std::vector<Cell> cells;
    for (const auto& ec : engines)
        for (std::size_t p = 0; p < kPrimitiveCount; ++p)
            for (std::size_t n = 0; n <= patterns.size(); ++n) {
                const LockCounts& c = *ec->cells[p * (patterns.size() + 1) + n];
                if (!c.seen.load(std::memory_order_relaxed)) continue;
                std::string_view name = patterns.empty()      ? std::string_view()
                                        : n < patterns.size() ? std::string_view(patterns[n])
                                                              : kOther;
                cells.push_back({&c, ec->engine, kPrimitives[p], name});
            }
    Emit e{each, {}};
    auto relaxed = [](const auto& a) {
        return static_cast<double>(a.load(std::memory_order_relaxed));
    };
    for (const auto& c : cells)
        for (std::size_t o = 0; o < kOutcomeCount; ++o)
            if (c.counts->acquire[o]->count() > 0)
                e.histogram(kAcquireFamily, c, *c.counts->acquire[o], bounds, kOutcomes[o]);
    for (const auto& c : cells)
        if (c.counts->held.count() > 0) e.histogram(kHeldFamily, c, c.counts->held, bounds);
    for (const auto& c : cells) e.value(kHoldingFamily, c, relaxed(c.counts->holding));
    for (const auto& c : cells) e.value(kWaitingFamily, c, relaxed(c.counts->waiting));
    for (const auto& c : cells) e.value(kLostFamily, c, relaxed(c.counts->lost));
    for (const auto& c : cells)
        for (auto [result, n] : {std::pair{"renewed", &c.counts->renewed},
                                 std::pair{"failed", &c.counts->renew_failed}}) {
            e.start(kRenewalsFamily, c).labels.emplace_back("result", result);
            e.s.value = relaxed(*n);
            each(e.s);
        }
    for (const auto& c : cells) e.value(kUnknownFamily, c, relaxed(c.counts->unknown));
}

std::string metrics_text(MetricsState& s) {
    std::string out;
    std::size_t said = 0;  // families whose metadata is out: each is said, even with no series
    auto say_through = [&](std::size_t f) {
        for (; said <= f && said < kFamilies; ++said) {
            const auto& x = kFamily[said];
            family(out, x.name, kTypeNames[static_cast<std::size_t>(x.type)], x.unit, x.help);
        }
    };
    metrics_collect(s, [&](const Sample& x) {
        std::size_t f = 0;
        while (f + 1 < kFamilies && kFamily[f].name != x.family) ++f;
        say_through(f);
        sample_text(out, x);
    });
    say_through(kFamilies - 1);
    out += "# EOF\n";
    return out;
}

}  // namespace deadbolt::detail
