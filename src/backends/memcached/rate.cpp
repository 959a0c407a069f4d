// RateLimiter on memcached (one server): a token bucket in one item, "<rate> <per_ms> <burst>
// <tokens> <at_ms>", taken from by compare-and-set. Memcached has no clock a command can read,
// so a bucket refills by the clients' clocks (Unix time): clients whose clocks disagree by d
// let in up to d's worth of refill more or less (README, "Memcached"). A full bucket is the
// same as none: the item expires once refilled, and then its shape may change.
#include <fmt/format.h>

#include <cmath>
#include <sstream>

#include "backends/memcached/store.hpp"
#include "backends/memcached/wire.hpp"

namespace deadbolt::detail {
namespace {

struct Bucket {
    std::int64_t rate = 0, per = 0, burst = 0;
    double tokens = 0;
    std::int64_t at = 0;
};

std::optional<Bucket> parse_bucket(const std::string& v) {
    std::istringstream in(v);
    Bucket b;
    if (!(in >> b.rate >> b.per >> b.burst >> b.tokens >> b.at) || b.rate < 1 || b.per < 1)
        return std::nullopt;
    return b;
}

std::int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

}  // namespace

Status McStore::rate_take(const std::string& name, const RateLimit& limit, std::int64_t n,
                          RateDecision& out) {
    const std::string k = keys(name).lock();
    const double rate = static_cast<double>(limit.rate),
                 per = static_cast<double>(limit.per.count()),
                 burst = static_cast<double>(limit.burst);
    for (int round = 0; round < 16; ++round) {
        auto seen = nodes_->one(0, {meta_request("mg", k, "v c"), 1}, deadline());
        if (!seen.status.ok()) return seen.status;
        const MetaReply& r = seen.replies.front();
        const std::int64_t now = now_ms();
        double tokens = burst;
        bool fresh = r.code == "EN";
        if (!fresh) {
            auto b = parse_bucket(r.value);
            if (!b)
                return Status::error(errc::wrong_type,
                                     fmt::format("'{}' holds something that is not a deadbolt "
                                                 "rate limiter: pick another name",
                                                 name));
            tokens = std::min(
                static_cast<double>(b->burst),
                b->tokens + static_cast<double>(std::max<std::int64_t>(0, now - b->at)) *
                                static_cast<double>(b->rate) / static_cast<double>(b->per));
            bool same =
                b->rate == limit.rate && b->per == limit.per.count() && b->burst == limit.burst;
            if (!same && tokens < static_cast<double>(b->burst))
                return Status::error(
                    errc::invalid_argument,
                    fmt::format("the rate limiter is used with rate/per/burst {}/{}ms/{} but this "
                                "client asked for {}/{}ms/{}: every user of a name must agree",
                                b->rate, b->per, b->burst, limit.rate, limit.per.count(),
                                limit.burst));
            if (!same) tokens = burst;
        }
        const bool ok = n > 0 && tokens >= static_cast<double>(n);
        out.allowed = ok;
        out.remaining =
            static_cast<std::int64_t>(std::floor(tokens - (ok ? static_cast<double>(n) : 0)));
        out.retry_in = ok || n == 0 ? std::chrono::milliseconds(0)
                                    : std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(
                                          (static_cast<double>(n) - tokens) * per / rate)));
        if (!ok) return {};
        const double left = tokens - static_cast<double>(n);
        auto full_in = static_cast<std::int64_t>(std::ceil((burst - left) * per / rate));
        std::string value =
            fmt::format("{} {} {} {} {}", limit.rate, limit.per.count(), limit.burst, left, now);
        auto cas = fresh ? 0 : static_cast<std::uint64_t>(r.number('c').value_or(0));
        // The TTL only drops a bucket once it is full again; one that takes longer than
        // memcached's longest TTL to refill is kept without one (a longer TTL is read as a date).
        auto ttl = ttl_seconds(full_in);
        auto wrote = nodes_->one(
            0, {classic_store(k, ttl > kLongestRelativeTtlS ? 0 : ttl, value, cas), 1}, deadline());
        if (!wrote.status.ok()) return wrote.status;
        if (wrote.replies.front().code == "STORED") return {};
        // Another client took from it meanwhile: look again.
    }
    return Status::error(errc::busy, fmt::format("rate limiter '{}' is taken from by too many "
                                                 "clients at once to get a turn: try again",
                                                 name));
}

}  // namespace deadbolt::detail
