// Counting lock events (deadbolt::metrics::Registry): each event is one index computation and a
// few relaxed atomic adds into cells laid out when the observer was made.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "deadbolt/error.hpp"
#include "metrics/openmetrics.hpp"
#include "metrics/state.hpp"

namespace deadbolt::metrics {
namespace {

using detail::EngineCounts;
using detail::LockCounts;

std::size_t primitive_index(std::string_view p) {
    for (std::size_t i = 0; i < detail::kPrimitiveCount; ++i)
        if (p == detail::kPrimitives[i]) return i;
    return 0;  // a primitive added later counts as a mutex until it has a label of its own
}

detail::Outcome outcome_of(const LockEvent& e) {
    using enum detail::Outcome;
    if (e.kind == LockEventKind::granted) return kGranted;
    if (e.error == errc::not_acquired) return e.refusals <= 1 ? kRefused : kTimeout;  // waited
    if (e.error == errc::cancelled) return kCancelled;
    if (e.error == errc::unknown_outcome) return kUnknown;
    return kError;
}

// An observation's bucket among bounds (seconds): the first bound it does not exceed.
std::size_t bucket_of(const std::vector<double>& bounds, std::chrono::nanoseconds d) {
    const double s = std::chrono::duration<double>(d).count();
    return static_cast<std::size_t>(std::lower_bound(bounds.begin(), bounds.end(), s) -
                                    bounds.begin());
}

void observe(const std::vector<double>& bounds, detail::AtomicHistogram& h,
             std::chrono::nanoseconds d) {
    h.observe(bucket_of(bounds, d),
              static_cast<std::uint64_t>(std::max<std::int64_t>(0, d.count())));
}

void count(const detail::MetricsState& s, EngineCounts& ec, const LockEvent& e) noexcept {
    const auto& patterns = s.options.name_patterns;
    std::size_t named = 0;
    if (!patterns.empty()) {
        try {
            // fnmatch needs the name NUL-terminated: a buffer per thread, grown once to the
            // longest name it saw, so counting allocates nothing after the first events.
            thread_local std::string name;
            name.assign(e.name);
            named = detail::pattern_index(patterns, name);
        } catch (const std::exception&) {
            named = patterns.size();  // no memory to grow the buffer: "other"
        }
    }
    LockCounts& c = *ec.cells[primitive_index(e.primitive) * (patterns.size() + 1) + named];
    c.seen.store(true, std::memory_order_relaxed);
    const auto& bounds = s.options.buckets;
    switch (e.kind) {
        case LockEventKind::refused:
            if (e.refusals == 1) c.waiting.fetch_add(1, std::memory_order_relaxed);
            break;
        case LockEventKind::granted:
        case LockEventKind::gave_up:
            // The round trip when it took less than the whole millisecond waited counts.
            observe(bounds, *c.acquire[outcome_of(e)],
                    std::max<std::chrono::nanoseconds>(e.waited, e.took));
            if (e.refusals >= 1) c.waiting.fetch_sub(1, std::memory_order_relaxed);
            if (e.kind == LockEventKind::granted) c.holding.fetch_add(1, std::memory_order_relaxed);
            break;
        case LockEventKind::unknown_outcome:
            c.unknown.fetch_add(1, std::memory_order_relaxed);
            break;
        case LockEventKind::renewed:
            c.renewed.fetch_add(1, std::memory_order_relaxed);
            break;
        case LockEventKind::renew_failed:
            c.renew_failed.fetch_add(1, std::memory_order_relaxed);
            break;
        case LockEventKind::lost:
        case LockEventKind::released:
            if (e.kind == LockEventKind::lost) c.lost.fetch_add(1, std::memory_order_relaxed);
            if (e.ended) {
                observe(bounds, c.held, e.held);
                c.holding.fetch_sub(1, std::memory_order_relaxed);
            }
            break;
        case LockEventKind::retrying:
            break;
    }
}

}  // namespace

Registry::Registry(Options options) : s_(std::make_shared<detail::MetricsState>()) {
    const auto& b = options.buckets;
    if (b.empty() || b.front() <= 0 || !std::is_sorted(b.begin(), b.end()) ||
        std::adjacent_find(b.begin(), b.end()) != b.end())
        throw UsageError(make_error_code(errc::invalid_argument),
                         "metrics::Options::buckets must be bounds in seconds above 0, strictly "
                         "ascending (+Inf is added)");
    detail::check_name_patterns(options.name_patterns, "metrics::Options");
    s_->options = std::move(options);
}

LockObserver Registry::observer(std::string_view engine, LockObserver next) const {
    std::shared_ptr<EngineCounts> ec;
    {
        std::lock_guard lk(s_->m);
        for (const auto& e : s_->engines)
            if (e->engine == engine) ec = e;
        if (!ec) {
            ec = std::make_shared<EngineCounts>(
                std::string(engine), s_->options.name_patterns.size(), s_->options.buckets.size());
            s_->engines.push_back(ec);
        }
    }
    return [s = s_, ec = std::move(ec), next = std::move(next)](const LockEvent& e) {
        count(*s, *ec, e);
        if (next) next(e);
    };
}

std::string Registry::text() const {
    return detail::metrics_text(*s_);
}

void Registry::collect(const std::function<void(const Sample&)>& each) const {
    detail::metrics_collect(*s_, each);
}

}  // namespace deadbolt::metrics
