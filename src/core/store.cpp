// The defaults of Store's optional operations: an engine that does not offer one says so.
#include "core/store.hpp"

#include <fmt/format.h>

namespace deadbolt::detail {
namespace {

Status not_offered(std::string_view what) {
    return Status::error(errc::invalid_argument,
                         fmt::format("{} is not offered by this engine", what));
}

}  // namespace

void Claim::async_attempt(const std::string& token, std::chrono::milliseconds keep, Attempted& a,
                          Fences& f, std::function<void()> done) {
    auto then = std::move(done);
    attempt(token, keep, a, f);
    then();
}
void Claim::async_arm(Clock::time_point until, std::function<void(Status)> done) {
    auto then = std::move(done);
    then(arm(until));
}
// NOLINTNEXTLINE(performance-unnecessary-value-param): overrides keep it
void Claim::async_wait(std::function<void()> /*woken*/) {}
void Claim::async_confirm(std::function<void(Status)> done) {
    auto then = std::move(done);
    then(confirm());
}
void Store::async_release(std::shared_ptr<const Holding> h, Clock::time_point by,
                          std::function<void(Verdict)> done) {
    auto held = std::move(h);
    const Holding* one = held.get();
    auto then = std::move(done);
    then(release({&one, 1}, by).front());
}

Status Store::put_if_held(const Holding&, std::string_view, std::string_view, Clock::time_point,
                          bool&) {
    return Status::error(
        errc::invalid_argument,
        "a write checked against the lock in the same step is offered on etcd and ZooKeeper "
        "only: Redis keeps "
        "the lock and your data apart; guard the data by the lease's fence instead "
        "(Client::fenced_set / fenced_cas)");
}

Status Store::offers(std::string_view) const {
    return {};
}
Status Store::latch_set(const std::string&, std::int64_t, std::chrono::milliseconds, bool&) {
    return not_offered("CountDownLatch");
}
Status Store::latch_count_down(const std::string&, bool&) {
    return not_offered("CountDownLatch");
}
Status Store::latch_count(const std::string&, std::int64_t&) {
    return not_offered("CountDownLatch");
}
bool Store::latch_wait(const std::string&, const AcquireOptions&) {
    not_offered("CountDownLatch").throw_if_error();
    return false;
}
Status Store::proclaim(const std::string&, const std::string&, std::string_view, bool&) {
    return not_offered("LeaderElection");
}
Status Store::leader(const std::string&, Leader&) {
    return not_offered("LeaderElection");
}
Leader Store::observe(const std::string&, const Leader&, const AcquireOptions&) {
    not_offered("LeaderElection").throw_if_error();
    return {};
}
Status Store::permit_release(const std::string&, std::string_view, bool&) {
    return not_offered("PermitExpirableSemaphore");
}
Status Store::permit_extend(const std::string&, std::string_view, std::chrono::milliseconds,
                            bool&) {
    return not_offered("PermitExpirableSemaphore");
}
Status Store::permits_in_use(const std::string&, int, int&) {
    return not_offered("Semaphore");
}
Status Store::rate_take(const std::string&, const RateLimit&, std::int64_t, RateDecision&) {
    return not_offered("RateLimiter");
}

Status Store::statuses(const std::vector<std::string>&,
                       std::vector<std::pair<LockStatus, Status>>&) {
    return not_offered("status");
}
Status Store::lock_names(std::string_view, std::vector<std::string>&) {
    return not_offered("list");
}
Status Store::force_unlock(const std::string&, std::string&) {
    return not_offered("force_unlock");
}
Status Store::fenced_get(std::string_view, FencedValue&) {
    return not_offered("fenced data");
}
Status Store::fenced_write(std::string_view, std::string_view, std::uint64_t, std::string_view,
                           FencedResult&) {
    return not_offered("fenced data");
}
Status Store::ping() {
    return {};
}

}  // namespace deadbolt::detail
