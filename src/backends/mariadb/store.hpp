// MyStore: the seam's MariaDB (and MySQL) side, on GET_LOCK (sql/store.hpp says how a
// session holds a lock; dialect.hpp the statements). What this adds: which shapes MariaDB
// keeps (no RWLock: GET_LOCK has no shared mode), the names in use and their pruning, and
// what a client sees without holding (admin.cpp); its tables are schema.hpp's.
#pragma once

#include <string>
#include <vector>

#include "backends/mariadb/conn.hpp"
#include "backends/mariadb/url.hpp"
#include "backends/sql/store.hpp"

namespace deadbolt::detail {

class MyStore final : public SqlStore, public RateLimits, public Admin, public FencedData {
  public:
    /// first: a session to the server, whose version says which statements a grant may use.
    MyStore(ClientImpl& c, const MyUrl& url, const std::shared_ptr<MyConn>& first);

    Status supports(const LockSpec& spec) const override;
    RateLimits* rate_limits() override { return this; }
    Admin* admin() override { return this; }
    FencedData* fenced_data() override { return this; }
    Status keeps(Shape shape) const override;
    Status refusal(std::string_view what) const override;
    Status statuses(const std::vector<std::string>& names,
                    std::vector<std::pair<LockStatus, Status>>& out) override;
    Status lock_names(std::string_view pattern, std::vector<std::string>& names) override;
    Status force_unlock(const std::string& name, std::string& kind) override;
    Status rate_take(const std::string& name, const RateLimit& limit, std::int64_t n,
                     RateDecision& out) override;
    Status fenced_get(std::string_view key, FencedValue& out) override;
    Status fenced_write(std::string_view key, std::string_view value, std::uint64_t fence,
                        std::string_view version, FencedResult& out) override;

    std::string rights_advice() const override;

  protected:
    Verdict orphan_holds(const SqlHolding& held, Clock::time_point by) override;
    Status end_orphan(const SqlHolding& held, Clock::time_point by) override;
    std::string record_names(const std::vector<std::string>& fresh) const override;
    std::string prune_names() const override;

  private:
    const std::string database_, user_;  // the URL's, for GRANTs
};

}  // namespace deadbolt::detail
