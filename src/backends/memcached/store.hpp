// McStore: locks kept as memcached items (DESIGN section 15). A grant is an add (`ms <key> ME`,
// the meta protocol's add mode) of the holder's token with a TTL, and the same round trip draws its
// fence from a counter beside it (`ma`, created at the time in microseconds, so that a counter
// a restart or an eviction lost starts again above every fence it gave); a release
// is a compare-and-delete, an extension a compare-and-set. Memcached has no notification:
// waiters look again with capped exponential backoff and jitter. Several servers decide by
// majority with Redlock's validity rule; a semaphore, a rate limiter and a latch need one
// server (their counts cannot be merged from several).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/memcached/holding.hpp"
#include "backends/memcached/keys.hpp"
#include "backends/memcached/nodes.hpp"
#include "core/client_impl.hpp"
#include "core/store.hpp"

namespace deadbolt::detail {

class McStore final : public Store,
                      public Permits,
                      public RateLimits,
                      public Latches,
                      public Admin {
  public:
    McStore(ClientImpl& c, std::unique_ptr<McNodes> nodes, std::vector<std::int64_t> server_times);

    Status supports(const LockSpec& spec) const override;
    std::unique_ptr<Claim> open(const LockSpec& spec, std::stop_token cancel) override;
    std::vector<Verdict> extend(std::span<const Renewal> rs, Clock::time_point by) override;
    std::vector<Verdict> release(std::span<const Holding* const> hs, Clock::time_point by) override;
    Verdict release_one(const Holding& h, Clock::time_point by) override;
    std::vector<Verdict> check(std::span<const Holding* const> hs, Clock::time_point by) override;
    Clock::time_point deadline() const override {
        return Clock::now() + client_.options.command_timeout;
    }
    Clock::time_point deadline_for(std::chrono::milliseconds ttl) const override;
    std::chrono::milliseconds longest_ttl() const override;
    bool late_yes_is_lost() const override { return nodes_->size() > 1; }
    Status keeps(Shape shape) const override;
    Status refusal(std::string_view what) const override;
    Status ping() override;

    Latches* latches() override { return one() ? this : nullptr; }
    Permits* permits() override { return one() ? this : nullptr; }
    RateLimits* rate_limits() override { return one() ? this : nullptr; }
    Admin* admin() override { return this; }

    // Permits.
    Status permit_release(const std::string& name, std::string_view id, bool& released) override;
    Status permit_extend(const std::string& name, std::string_view id,
                         std::chrono::milliseconds keep, bool& extended) override;
    Status permits_in_use(const std::string& name, int permits, int& in_use) override;
    // RateLimits.
    Status rate_take(const std::string& name, const RateLimit& limit, std::int64_t n,
                     RateDecision& out) override;
    // Latches.
    Status latch_set(const std::string& name, std::int64_t count, std::chrono::milliseconds ttl,
                     bool& set) override;
    Status latch_count_down(const std::string& name, bool& opened) override;
    Status latch_count(const std::string& name, std::int64_t& count) override;
    bool latch_wait(const std::string& name, const AcquireOptions& how) override;
    // Admin.
    Status statuses(const std::vector<std::string>& names,
                    std::vector<std::pair<LockStatus, Status>>& out) override;
    Status lock_names(std::string_view pattern, std::vector<std::string>& names) override;
    Status force_unlock(const std::string& name, std::string& kind) override;

    // For claims.
    McNodes& nodes() { return *nodes_; }
    bool one() const { return nodes_->size() == 1; }
    McKeys keys(std::string_view name) const;
    /// The floor of a new fence counter on server i: its clock, or this client's if later,
    /// in microseconds now.
    std::uint64_t fence_floor(std::size_t i) const;
    ClientImpl& client() { return client_; }
    /// What one holding op found on each server, decided by majority.
    enum class Op : unsigned char { extend, release, check };
    /// hs: this store's holdings (McHolding); keeps: how long each is kept from now (extend
    /// only). cas_tried: a release by each holding's CAS was sent already and met a moved
    /// CAS or a refusal, so the steps begin by reading what the item holds.
    std::vector<Verdict> on_holdings(Op op, std::span<const Holding* const> hs,
                                     std::span<const std::chrono::milliseconds> keeps,
                                     Clock::time_point by, bool cas_tried = false);

  private:
    // The release of h in one compare-and-delete, when it is of one name on one server with a
    // known CAS and the answer is plain; nullopt when on_holdings() must decide (tried: the
    // compare-and-delete was sent).
    std::optional<Verdict> release_at_once(const Holding& h, Clock::time_point by, bool& tried);

    // The slot of name that holds permit id (-1: none), and what reading it gave.
    Status find_permit(const std::string& name, std::string_view id, int& slot, MetaReply& found);

    ClientImpl& client_;
    std::unique_ptr<McNodes> nodes_;
    // Each server's clock (Unix seconds) when it was first asked, and when that was here.
    std::vector<std::int64_t> server_times_;
    Clock::time_point asked_at_;
};

/// The refusal of a keep past kLongestMcKeep (memcached would read its TTL as a date, long
/// past, and end the item at once), saying what asked for it.
Status mc_keep_too_long(std::chrono::milliseconds keep, std::string_view what);

}  // namespace deadbolt::detail
