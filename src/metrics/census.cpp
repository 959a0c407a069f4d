// The exporter's families: the engine's locks by kind (and name pattern), counted from one
// listing. The kinds every engine reports are always shown, at 0 when none is held, so that a
// query's sum does not vanish when the last lock of a kind is released.
#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <optional>

#include "metrics/census.hpp"
#include "metrics/openmetrics.hpp"

namespace deadbolt::detail {
namespace {

constexpr const char* kKinds[] = {"mutex", "reentrant", "readers", "semaphore", "leader"};

struct Tally {
    std::uint64_t locks = 0, holders = 0, waiters = 0;
    double oldest = -1;  // seconds; < 0: no holder said when it was granted
};

}  // namespace

std::string census_text(const Census& c) {
    const auto& patterns = c.name_patterns;
    const std::size_t groups = patterns.empty() ? 1 : patterns.size() + 1;
    const std::string engine = fmt::format("engine=\"{}\"", label_value(c.engine));

    std::map<std::string, std::vector<Tally>> by_kind;  // kind -> per name group
    for (const char* k : kKinds) by_kind[k].resize(groups);
    std::vector<std::uint64_t> fence(groups, 0);
    if (c.up)
        for (const auto& l : c.locks) {
            const LockStatus& s = l.status;
            auto& tallies = by_kind[s.kind.empty() ? "unknown" : s.kind];
            tallies.resize(groups);
            std::size_t g = pattern_index(patterns, l.name);
            Tally& t = tallies[g];
            ++t.locks;
            t.holders += static_cast<std::uint64_t>(std::max(s.holders, 0));
            t.waiters += static_cast<std::uint64_t>(std::max(s.waiters, 0));
            for (const auto& h : s.held_by)
                if (h.since)
                    // A grant stamped by an engine clock ahead of ours is 0 s old, not unknown.
                    t.oldest =
                        std::max({t.oldest, 0.0,
                                  std::chrono::duration<double>(c.listed_at - *h.since).count()});
            fence[g] = std::max(fence[g], s.last_fence);
        }

    std::string out;
    auto gauge = [&](std::string_view metric, std::string_view unit, std::string_view help,
                     auto value) {
        family(out, metric, "gauge", unit, help);
        if (!c.up) return;  // no listing, no counts: absent rather than stale
        for (const auto& [kind, tallies] : by_kind)
            for (std::size_t g = 0; g < groups; ++g)
                if (auto v = value(tallies[g]); v)
                    fmt::format_to(std::back_inserter(out), "{}{{{},kind=\"{}\"{}}} {}\n", metric,
                                   engine, label_value(kind), name_label(patterns, g), *v);
    };
    using Value = std::optional<double>;
    gauge("deadbolt_locks", "", "Locks held now on the engine, whoever holds them, by kind.",
          [](const Tally& t) -> Value { return static_cast<double>(t.locks); });
    gauge("deadbolt_lock_holders", "",
          "Holders of those locks (a mutex has one; readers, permits and reentrant owners add up).",
          [](const Tally& t) -> Value { return static_cast<double>(t.holders); });
    gauge("deadbolt_lock_waiters", "", "Waiters in line for those locks, as the engine keeps them.",
          [](const Tally& t) -> Value { return static_cast<double>(t.waiters); });
    gauge("deadbolt_lock_oldest_holding_seconds", "seconds",
          "Age of the oldest holding whose grant time the engine keeps.",
          [](const Tally& t) -> Value { return t.oldest < 0 ? Value{} : Value{t.oldest}; });
    family(out, "deadbolt_lock_fence_max", "gauge", "",
           "The highest fencing token among the held locks.");
    if (c.up)
        for (std::size_t g = 0; g < groups; ++g)
            if (fence[g] > 0)
                fmt::format_to(std::back_inserter(out), "deadbolt_lock_fence_max{{{}{}}} {}\n",
                               engine, name_label(patterns, g), fence[g]);

    family(out, "deadbolt_exporter_up", "gauge", "",
           "1 when the last listing of the engine succeeded.");
    fmt::format_to(std::back_inserter(out), "deadbolt_exporter_up{{{}}} {}\n", engine,
                   c.up ? 1 : 0);
    family(out, "deadbolt_exporter_listing_seconds", "gauge", "seconds",
           "How long the last listing took.");
    fmt::format_to(std::back_inserter(out), "deadbolt_exporter_listing_seconds{{{}}} {}\n", engine,
                   c.listing_seconds);
    family(out, "deadbolt_exporter_listings", "counter", "",
           "Listings made (scrapes close together share one).");
    fmt::format_to(std::back_inserter(out), "deadbolt_exporter_listings_total{{{}}} {}\n", engine,
                   c.listings);
    family(out, "deadbolt_exporter_listing_errors", "counter", "", "Listings that failed.");
    fmt::format_to(std::back_inserter(out), "deadbolt_exporter_listing_errors_total{{{}}} {}\n",
                   engine, c.errors);
    family(out, "deadbolt_exporter_scrapes", "counter", "", "Scrapes answered.");
    fmt::format_to(std::back_inserter(out), "deadbolt_exporter_scrapes_total{{{}}} {}\n", engine,
                   c.scrapes);
    out += "# EOF\n";
    return out;
}

}  // namespace deadbolt::detail
