// What deadbolt::metrics counts, as atomics laid out when an engine's observer is made: the
// counting path indexes arrays (primitive, name pattern, outcome) and adds, with no lock and
// no allocation; the exposition reads the same cells.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "deadbolt/metrics.hpp"

namespace deadbolt::detail {

/// A histogram's cells: a count per bucket (the last is +Inf), the total count and the sum.
class AtomicHistogram {
  public:
    explicit AtomicHistogram(std::size_t bounds)
        : buckets_(std::make_unique<std::atomic<std::uint64_t>[]>(bounds + 1)), size_(bounds + 1) {}
    /// Adds one observation of ns nanoseconds that falls in bucket (bounds() for +Inf).
    void observe(std::size_t bucket, std::uint64_t ns) noexcept {
        buckets_[bucket].fetch_add(1, std::memory_order_relaxed);
        count_.fetch_add(1, std::memory_order_relaxed);
        sum_ns_.fetch_add(ns, std::memory_order_relaxed);
    }
    std::uint64_t bucket(std::size_t i) const noexcept {
        return buckets_[i].load(std::memory_order_relaxed);
    }
    std::uint64_t count() const noexcept { return count_.load(std::memory_order_relaxed); }
    std::uint64_t sum_ns() const noexcept { return sum_ns_.load(std::memory_order_relaxed); }
    std::size_t size() const noexcept { return size_; }

  private:
    std::unique_ptr<std::atomic<std::uint64_t>[]> buckets_;
    std::size_t size_;
    std::atomic<std::uint64_t> count_{0}, sum_ns_{0};
};

/// The outcomes of deadbolt_acquire_seconds: indexes into kOutcomes, their labels.
enum Outcome : std::size_t { kGranted, kRefused, kTimeout, kCancelled, kUnknown, kError };
inline constexpr const char* kOutcomes[] = {"granted",   "refused", "timeout",
                                            "cancelled", "unknown", "error"};
inline constexpr std::size_t kOutcomeCount = std::size(kOutcomes);
static_assert(kOutcomeCount == kError + 1);
/// LockEvent::primitive's values, in label order.
inline constexpr const char* kPrimitives[] = {"mutex",     "fair",      "read",  "write",
                                              "reentrant", "semaphore", "multi", "leader"};
inline constexpr std::size_t kPrimitiveCount = std::size(kPrimitives);

/// The counts of one (primitive, name pattern) under one engine.
struct LockCounts {
    explicit LockCounts(std::size_t bounds) : held(bounds) {
        acquire.reserve(kOutcomeCount);
        for (std::size_t i = 0; i < kOutcomeCount; ++i)
            acquire.push_back(std::make_unique<AtomicHistogram>(bounds));
    }
    std::vector<std::unique_ptr<AtomicHistogram>> acquire;  // by outcome
    AtomicHistogram held;
    std::atomic<std::int64_t> holding{0}, waiting{0};
    std::atomic<std::uint64_t> lost{0}, unknown{0}, renewed{0}, renew_failed{0};
    std::atomic<bool> seen{false};  // an event came: its series are shown
};

/// One engine label's counts: [primitive][name pattern (the last: "other")].
struct EngineCounts {
    EngineCounts(std::string e, std::size_t patterns, std::size_t bounds) : engine(std::move(e)) {
        cells.reserve(kPrimitiveCount * (patterns + 1));
        for (std::size_t i = 0; i < kPrimitiveCount * (patterns + 1); ++i)
            cells.push_back(std::make_unique<LockCounts>(bounds));
    }
    std::string engine;
    std::vector<std::unique_ptr<LockCounts>> cells;
};

struct MetricsState {
    metrics::Options options;
    std::mutex m;  // adding an engine's counts, and reading the list
    std::vector<std::shared_ptr<EngineCounts>> engines;
};

/// Every series of s's counts, family by family (pure of I/O).
void metrics_collect(MetricsState& s, const std::function<void(const metrics::Sample&)>& each);

/// The OpenMetrics text of those series (pure of I/O).
std::string metrics_text(MetricsState& s);

}  // namespace deadbolt::detail
