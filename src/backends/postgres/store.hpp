// PgStore: the seam's PostgreSQL side (DESIGN section 12), on session advisory locks
// (sql/store.hpp says how a session holds a lock; dialect.hpp the statements). What this adds:
// which shapes PostgreSQL keeps, and what a client sees without holding: a lock's state from
// pg_locks, the names in use, force-unlock, fenced values (admin.cpp, fenced.cpp); and a
// Semaphore's permits, rows with an expiry (permit_claim.hpp, permits.cpp); rate limiters'
// buckets and latches, rows too (rate.cpp, latch.cpp); an election's leader, a lock and a row
// (election.cpp).
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "backends/postgres/dialect.hpp"
#include "backends/postgres/url.hpp"
#include "backends/sql/store.hpp"

namespace deadbolt::detail {

class PgStore final : public SqlStore,
                      public Latches,
                      public Elections,
                      public Permits,
                      public RateLimits,
                      public Admin,
                      public FencedData,
                      public HeldWrites {
  public:
    PgStore(ClientImpl& c, const PgUrl& url, std::shared_ptr<SqlSession> first);

    Status supports(const LockSpec& spec) const override;
    std::unique_ptr<Claim> open(const LockSpec& spec, std::stop_token cancel) override;
    // Every capability deadbolt has (ARCHITECTURE item 41).
    Latches* latches() override { return this; }
    Elections* elections() override { return this; }
    Permits* permits() override { return this; }
    RateLimits* rate_limits() override { return this; }
    Admin* admin() override { return this; }
    FencedData* fenced_data() override { return this; }
    HeldWrites* held_writes() override { return this; }
    Status statuses(const std::vector<std::string>& names,
                    std::vector<std::pair<LockStatus, Status>>& out) override;
    Status lock_names(std::string_view pattern, std::vector<std::string>& names) override;
    Status force_unlock(const std::string& name, std::string& kind) override;
    Status latch_set(const std::string& name, std::int64_t count, std::chrono::milliseconds ttl,
                     bool& set) override;
    Status latch_count_down(const std::string& name, bool& opened) override;
    Status latch_count(const std::string& name, std::int64_t& count) override;
    bool latch_wait(const std::string& name, const AcquireOptions& how) override;
    Status on_grant(SqlSession& s, const LockSpec& spec, const std::string& token,
                    std::uint64_t fence, std::chrono::milliseconds keep,
                    std::string& farewell) override;
    Status proclaim(const std::string& name, const std::string& token, std::string_view value,
                    bool& ours) override;
    Status leader(const std::string& name, Leader& out) override;
    Leader observe(const std::string& name, const Leader& seen, const AcquireOptions& how) override;
    Status rate_take(const std::string& name, const RateLimit& limit, std::int64_t n,
                     RateDecision& out) override;
    Status fenced_get(std::string_view key, FencedValue& out) override;
    Status fenced_write(std::string_view key, std::string_view value, std::uint64_t fence,
                        std::string_view version, FencedResult& out) override;
    Status put_if_held(const Holding& h, std::string_view key, std::string_view value,
                       Clock::time_point by, bool& put) override;
    Status permit_release(const std::string& name, std::string_view id, bool& released) override;
    Status permit_extend(const std::string& name, std::string_view id,
                         std::chrono::milliseconds keep, bool& extended) override;
    Status permits_in_use(const std::string& name, int permits, int& in_use) override;

    std::string rights_advice() const override;

  protected:
    Verdict orphan_holds(const SqlHolding& held, Clock::time_point by) override;
    Status end_orphan(const SqlHolding& held, Clock::time_point by) override;
    Verdict on_row(RowOp op, const SqlRow& row, std::chrono::milliseconds keep,
                   Clock::time_point by) override;
    std::string record_names(const std::vector<std::string>& fresh) const override;
    std::string prune_names() const override;

  private:
    const std::string& schema() const { return schema_; }
    const std::string schema_;
    const std::string user_;  // the URL's, for GRANTs
    std::mutex terms_m_;
    std::map<std::string, std::pair<std::string, std::uint64_t>> terms_;  // name: token, term
};

}  // namespace deadbolt::detail
