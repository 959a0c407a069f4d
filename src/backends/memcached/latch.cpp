// CountDownLatch on memcached (one server): the count in an item that expires with the latch's
// TTL, counted down by compare-and-set (so exactly one call opens it); waiters look again
// with backoff, as lock waiters do.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "backends/memcached/claim.hpp"
#include "backends/memcached/store.hpp"
#include "backends/memcached/wire.hpp"

namespace deadbolt::detail {
namespace {

std::optional<std::int64_t> count_of(const MetaReply& r) {
    std::int64_t v = 0;
    auto [p, ec] = std::from_chars(r.value.data(), r.value.data() + r.value.size(), v);
    if (ec != std::errc{} || p != r.value.data() + r.value.size() || v < 0) return std::nullopt;
    return v;
}

Status not_a_latch(const std::string& name) {
    return Status::error(errc::wrong_type,
                         fmt::format("'{}' holds something that is not a deadbolt latch: pick "
                                     "another name",
                                     name));
}

}  // namespace

Status McStore::latch_set(const std::string& name, std::int64_t count,
                          std::chrono::milliseconds ttl, bool& set) {
    // Capped at memcached's longest relative TTL (a longer one is read as a date, long past,
    // and would open the latch at once): a 30-day latch opens up to 2 s early.
    const auto t = std::min(ttl_seconds(ttl.count()), kLongestRelativeTtlS);
    auto r =
        nodes_->one(0, {classic_store(keys(name).lock(), t, std::to_string(count)), 1}, deadline());
    if (!r.status.ok()) return r.status;
    set = r.replies.front().code == "STORED";
    return {};
}

Status McStore::latch_count_down(const std::string& name, bool& opened) {
    opened = false;
    const std::string k = keys(name).lock();
    for (int round = 0; round < 16; ++round) {
        auto seen = nodes_->one(0, {meta_request("mg", k, "v c t"), 1}, deadline());
        if (!seen.status.ok()) return seen.status;
        const MetaReply& r = seen.replies.front();
        if (r.code == "EN") return {};  // open already (or never set)
        auto n = count_of(r);
        if (!n) return not_a_latch(name);
        if (*n == 0) return {};
        auto ttl = r.number('t').value_or(-1);
        auto wrote = nodes_->one(
            0,
            {classic_store(k, ttl < 0 ? 0 : std::max<std::int64_t>(ttl, 1), std::to_string(*n - 1),
                           static_cast<std::uint64_t>(r.number('c').value_or(0))),
             1},
            deadline());
        if (!wrote.status.ok()) return wrote.status;
        if (wrote.replies.front().code == "STORED") {
            opened = *n == 1;
            return {};
        }
    }
    return Status::error(errc::busy, fmt::format("latch '{}' is counted down by too many clients "
                                                 "at once to get a turn: try again",
                                                 name));
}

Status McStore::latch_count(const std::string& name, std::int64_t& count) {
    auto seen = nodes_->one(0, {meta_request("mg", keys(name).lock(), "v"), 1}, deadline());
    if (!seen.status.ok()) return seen.status;
    const MetaReply& r = seen.replies.front();
    if (r.code == "EN") return count = 0, Status{};
    auto n = count_of(r);
    if (!n) return not_a_latch(name);
    count = *n;
    return {};
}

bool McStore::latch_wait(const std::string& name, const AcquireOptions& how) {
    for (unsigned look = 0;; ++look) {
        std::int64_t n = 0;
        latch_count(name, n).throw_if_error();
        if (n == 0) return true;
        auto now = Clock::now();
        if (how.cancel.stop_requested() || (how.deadline && now >= *how.deadline)) return false;
        mc_nap(look, how.deadline.value_or(Clock::time_point::max()), how.cancel);
    }
}

}  // namespace deadbolt::detail
