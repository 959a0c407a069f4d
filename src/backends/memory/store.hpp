// MemoryStore: one client's view of a memory space (memory://NAME; DESIGN section 15). It
// keeps every primitive the real engines keep, with their guarantees, in the space's state
// under one mutex; waiters are woken by every change (no polling), and a loss the test
// injects makes the clients check their holdings at once.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "backends/memory/space.hpp"
#include "core/client_impl.hpp"
#include "core/store.hpp"

namespace deadbolt::detail {

struct MemHolding;

class MemoryStore final : public Store,
                          public Latches,
                          public Elections,
                          public Permits,
                          public RateLimits,
                          public Admin,
                          public FencedData,
                          public HeldWrites {
  public:
    MemoryStore(ClientImpl& c, std::shared_ptr<MemorySpace> space);
    ~MemoryStore() override;
    MemoryStore(const MemoryStore&) = delete;
    MemoryStore& operator=(const MemoryStore&) = delete;

    Status supports(const LockSpec& /*spec*/) const override { return {}; }
    std::unique_ptr<Claim> open(const LockSpec& spec, std::stop_token cancel) override;
    std::vector<Verdict> extend(std::span<const Renewal> rs, Clock::time_point by) override;
    std::vector<Verdict> release(std::span<const Holding* const> hs, Clock::time_point by) override;
    std::vector<Verdict> check(std::span<const Holding* const> hs, Clock::time_point by) override;
    Clock::time_point deadline() const override {
        return Clock::now() + client_.options.command_timeout;
    }
    Clock::time_point deadline_for(std::chrono::milliseconds /*ttl*/) const override {
        return deadline();
    }
    bool late_yes_is_lost() const override { return false; }

    Latches* latches() override { return this; }
    Elections* elections() override { return this; }
    Permits* permits() override { return this; }
    RateLimits* rate_limits() override { return this; }
    Admin* admin() override { return this; }
    FencedData* fenced_data() override { return this; }
    HeldWrites* held_writes() override { return this; }

    Status latch_set(const std::string& name, std::int64_t count, std::chrono::milliseconds ttl,
                     bool& set) override;
    Status latch_count_down(const std::string& name, bool& opened) override;
    Status latch_count(const std::string& name, std::int64_t& count) override;
    bool latch_wait(const std::string& name, const AcquireOptions& how) override;

    Status proclaim(const std::string& name, const std::string& token, std::string_view value,
                    bool& ours) override;
    Status leader(const std::string& name, Leader& out) override;
    Leader observe(const std::string& name, const Leader& seen, const AcquireOptions& how) override;

    Status permit_release(const std::string& name, std::string_view id, bool& released) override;
    Status permit_extend(const std::string& name, std::string_view id,
                         std::chrono::milliseconds keep, bool& extended) override;
    Status permits_in_use(const std::string& name, int permits, int& in_use) override;

    Status rate_take(const std::string& name, const RateLimit& limit, std::int64_t n,
                     RateDecision& out) override;

    Status statuses(const std::vector<std::string>& names,
                    std::vector<std::pair<LockStatus, Status>>& out) override;
    Status lock_names(std::string_view pattern, std::vector<std::string>& names) override;
    Status force_unlock(const std::string& name, std::string& kind) override;

    Status fenced_get(std::string_view key, FencedValue& out) override;
    Status fenced_write(std::string_view key, std::string_view value, std::uint64_t fence,
                        std::string_view version, FencedResult& out) override;
    Status put_if_held(const Holding& h, std::string_view key, std::string_view value,
                       Clock::time_point by, bool& put) override;

    /// f(turn) as one call of kind other: its error, or the call's lost reply.
    template <class F>
    Status call(F&& f) {
        MemorySpace::Turn t(*space_, deadline(), memory::Call::other);
        if (!t.status().ok()) return t.status();
        if (Status st = f(t); !st.ok()) return st;
        return t.answer();
    }

    /// Looks with look(turn, wake_at) until it says done (true), or how's deadline passes or
    /// it is cancelled (false), sleeping between looks until the space changes or wake_at (a
    /// look sets it to when what it watches ends by itself). Throws a look's call's error.
    template <class F>
    bool watch(const AcquireOptions& how, F&& look) {
        const auto deadline = how.deadline.value_or(Clock::time_point::max());
        for (;;) {
            bool done = false;
            std::uint64_t seen = 0;
            auto wake_at = deadline;
            call([&](MemorySpace::Turn& t) {
                done = look(t, wake_at);
                seen = t.generation();
                return Status{};
            }).throw_if_error();
            if (done) return true;
            if (how.cancel.stop_requested() || Clock::now() >= deadline) return false;
            space_->wait_change(seen, wake_at, how.cancel);
        }
    }

    // For claims.
    MemorySpace& space() { return *space_; }
    /// name as the space keeps it: the client's prefix, then the name.
    std::string key(std::string_view name) const {
        return client_.options.key_prefix + std::string(name);
    }
    /// Until the space's time point t, on the steady clock waits run on.
    static Clock::time_point steady(const MemorySpace::Turn& t, Clock::time_point at) {
        return Clock::now() + (at - t.now());
    }

  private:
    /// Whether h holds (or, a waiter's, waits under) every one of its names now.
    static bool holds(MemState& st, const MemHolding& h, Clock::time_point now);

    ClientImpl& client_;
    std::shared_ptr<MemorySpace> space_;
    std::once_flag doubting_;  // at the first claim: on_doubt is set by then
    std::uint64_t doubter_ = 0;
};

}  // namespace deadbolt::detail
