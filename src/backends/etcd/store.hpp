// EtcdStore: the seam's etcd side (DESIGN section 12). A claim puts a contender key on a
// lease and waits for the key ahead of it to go (etcd's concurrency.Mutex); holdings are
// kept by their lease's keepalives, released by deleting the key (or revoking a lease of
// their own) and checked by their key's create revision, which is also the fence.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "backends/etcd/channel.hpp"
#include "backends/etcd/holding.hpp"
#include "backends/etcd/leases.hpp"
#include "backends/etcd/watches.hpp"
#include "core/client_impl.hpp"
#include "core/store.hpp"

namespace deadbolt::detail {

class EtcdStore final : public Store,
                        public Latches,
                        public Elections,
                        public Permits,
                        public Admin,
                        public FencedData,
                        public HeldWrites {
  public:
    EtcdStore(ClientImpl& c, std::shared_ptr<EtcdChannel> ch);
    ~EtcdStore() override;

    Status supports(const LockSpec& spec) const override;
    std::unique_ptr<Claim> open(const LockSpec& spec, std::stop_token cancel) override;
    std::vector<Verdict> extend(std::span<const Renewal> rs, Clock::time_point by) override;
    std::vector<Verdict> release(std::span<const Holding* const> hs, Clock::time_point by) override;
    void async_release(std::shared_ptr<const Holding> h, Clock::time_point by,
                       std::function<void(Verdict)> done) override;
    std::vector<Verdict> check(std::span<const Holding* const> hs, Clock::time_point by) override;
    Clock::time_point deadline() const override { return ch_->deadline(); }
    Clock::time_point deadline_for(std::chrono::milliseconds /*ttl*/) const override {
        return ch_->deadline();
    }
    bool late_yes_is_lost() const override { return false; }
    void stop() noexcept override;

    Latches* latches() override { return this; }
    Elections* elections() override { return this; }
    Permits* permits() override { return this; }
    Admin* admin() override { return this; }
    FencedData* fenced_data() override { return this; }
    HeldWrites* held_writes() override { return this; }
    Status refusal(std::string_view what) const override;
    Status statuses(const std::vector<std::string>& names,
                    std::vector<std::pair<LockStatus, Status>>& out) override;
    Status latch_set(const std::string& name, std::int64_t count, std::chrono::milliseconds ttl,
                     bool& set) override;
    Status latch_count_down(const std::string& name, bool& opened) override;
    Status latch_count(const std::string& name, std::int64_t& count) override;
    bool latch_wait(const std::string& name, const AcquireOptions& how) override;
    Status permit_release(const std::string& name, std::string_view id, bool& released) override;
    Status permit_extend(const std::string& name, std::string_view id,
                         std::chrono::milliseconds keep, bool& extended) override;
    Status permits_in_use(const std::string& name, int permits, int& in_use) override;
    Status lock_names(std::string_view pattern, std::vector<std::string>& names) override;
    Status force_unlock(const std::string& name, std::string& kind) override;
    Status proclaim(const std::string& name, const std::string& token, std::string_view value,
                    bool& ours) override;
    Status leader(const std::string& name, Leader& out) override;
    Leader observe(const std::string& name, const Leader& seen, const AcquireOptions& how) override;
    Status fenced_get(std::string_view key, FencedValue& out) override;
    Status fenced_write(std::string_view key, std::string_view value, std::uint64_t fence,
                        std::string_view version, FencedResult& out) override;
    Status put_if_held(const Holding& h, std::string_view key, std::string_view value,
                       Clock::time_point by, bool& put) override;
    Status ping() override;

    // For claims.
    EtcdChannel& channel() { return *ch_; }
    Leases& leases() { return *leases_; }
    const std::shared_ptr<Watches>& watches() { return watches_; }
    ClientImpl& client() { return client_; }
    /// Reserves keys for one claim of this client (and the holdings it makes); empty when
    /// another has one (two claims on one lease would share one key).
    std::shared_ptr<void> reserve(const std::vector<std::string>& keys);
    /// Up to limit (0: all) contenders under dir created at or before max_rev (0: any), oldest
    /// or newest first; seen: the revision the answer reflects.
    Status contenders(const std::string& dir, std::int64_t max_rev, bool oldest_first,
                      std::size_t limit, std::vector<mvccpb::KeyValue>& out, std::int64_t& seen);
    /// A campaign's term, found by its token when it proclaims.
    void add_term(const std::string& token, const std::shared_ptr<EtcdHolding>& h);
    /// The remaining time of lease id (-1 ms: no lease; 0 when gone or unknown).
    std::chrono::milliseconds lease_ttl(std::int64_t id);
    /// A granted holding watches its own key: a deletion by anyone else is a loss.
    void watch_own(EtcdHolding& h);

  private:
    // The Txn that deletes h's keys, each while it is still h's; what its answer means.
    static etcdserverpb::TxnRequest drop_txn(const EtcdHolding& h);
    static Verdict dropped(const etcdserverpb::TxnResponse& r);
    // One hold of a reentrant holding's owner goes; the key with the last.
    Verdict release_hold(const EtcdHolding& h, Clock::time_point by);

    ClientImpl& client_;
    std::shared_ptr<EtcdChannel> ch_;
    std::shared_ptr<Watches> watches_;
    std::unique_ptr<Leases> leases_;
    std::mutex terms_m_;
    std::map<std::string, std::weak_ptr<EtcdHolding>> terms_;  // by campaign token
    struct Reserved {
        std::mutex m;
        std::set<std::string> keys;
    };
    std::shared_ptr<Reserved> reserved_ = std::make_shared<Reserved>();
};

}  // namespace deadbolt::detail
