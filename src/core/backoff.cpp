#include "core/backoff.hpp"

#include <algorithm>
#include <random>

namespace deadbolt::detail {
namespace {

std::mt19937_64& rng() {
    thread_local std::mt19937_64 g{std::random_device{}()};
    return g;
}

double unit() {
    return std::uniform_real_distribution<double>(0.0, 1.0)(rng());
}

}  // namespace

std::chrono::milliseconds jittered_backoff(unsigned attempt, std::chrono::milliseconds base,
                                           std::chrono::milliseconds max, double r) {
    auto cap = std::max(max.count(), std::int64_t{0});
    std::int64_t d = std::max<std::int64_t>(base.count(), 1);
    for (unsigned i = 0; i < attempt && d < cap; ++i) d *= 2;
    d = std::min(d, cap);
    auto half = d / 2;
    return std::chrono::milliseconds(half + static_cast<std::int64_t>(r * double(d - half)));
}

std::chrono::milliseconds jittered_backoff(unsigned attempt, std::chrono::milliseconds base,
                                           std::chrono::milliseconds max) {
    return jittered_backoff(attempt, base, max, unit());
}

std::uint64_t random_seed() {
    return rng()();
}

std::chrono::milliseconds random_jitter(std::chrono::milliseconds max) {
    if (max.count() <= 0) return std::chrono::milliseconds(0);
    return std::chrono::milliseconds(
        std::uniform_int_distribution<std::int64_t>(0, max.count())(rng()));
}

}  // namespace deadbolt::detail
