// The defaults of the seam: blocking forms run on the loop, every shape kept, a plain refusal.
#include "core/store.hpp"

#include <fmt/format.h>

namespace deadbolt::detail {

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

Verdict Store::release_one(const Holding& h, Clock::time_point by) {
    const Holding* one = &h;
    return std::move(release({&one, 1}, by).front());
}

void Store::async_release(std::shared_ptr<const Holding> h, Clock::time_point by,
                          std::function<void(Verdict)> done) {
    auto held = std::move(h);
    auto then = std::move(done);
    then(release_one(*held, by));
}

Status Store::keeps(Shape /*shape*/) const {
    return {};
}

Status Store::refusal(std::string_view what) const {
    return Status::error(errc::invalid_argument,
                         fmt::format("{} is not offered by this engine", what));
}

Status Store::ping() {
    return {};
}

}  // namespace deadbolt::detail
