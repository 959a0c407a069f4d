// ZkStore: the seam's ZooKeeper side (DESIGN section 12), in Curator's layout. A claim puts an
// EPHEMERAL_SEQUENTIAL contender under the lock's znode and waits for the one just ahead of
// it to go (no herd, no polling); the session is the lease of every holding, and a holding of
// TTL T lives on the client's session of timeout T (sessions.hpp): a renewal is one read
// proving the session alive and the node still ours, a release deletes the node, and a check
// reads it. A granted node is watched: its deletion (force-unlock, another tool) is a loss told
// at once. The fence is the node's czxid. LeaderElection is Curator's LeaderLatch: the lowest
// "-latch-" candidate leads, its node's data is what it proclaims (election.cpp).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backends/zookeeper/holding.hpp"
#include "backends/zookeeper/session.hpp"
#include "backends/zookeeper/sessions.hpp"
#include "core/client_impl.hpp"
#include "core/store.hpp"

namespace deadbolt::detail {

class ZkStore final : public Store,
                      public Latches,
                      public Elections,
                      public Permits,
                      public Admin,
                      public HeldWrites {
  public:
    ZkStore(ClientImpl& c, std::unique_ptr<ZkSessions> sessions);
    ~ZkStore() override;

    Status supports(const LockSpec& spec) const override;
    std::chrono::milliseconds longest_ttl() const override;
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
    void stop() noexcept override;

    Latches* latches() override { return this; }
    Elections* elections() override { return this; }
    Permits* permits() override { return this; }
    Admin* admin() override { return this; }
    HeldWrites* held_writes() override { return this; }
    Status refusal(std::string_view what) const override;
    Status statuses(const std::vector<std::string>& names,
                    std::vector<std::pair<LockStatus, Status>>& out) override;
    Status ping() override;
    Status lock_names(std::string_view pattern, std::vector<std::string>& names) override;
    Status force_unlock(const std::string& name, std::string& kind) override;
    Status proclaim(const std::string& name, const std::string& token, std::string_view value,
                    bool& ours) override;
    Status leader(const std::string& name, Leader& out) override;
    Leader observe(const std::string& name, const Leader& seen, const AcquireOptions& how) override;
    Status permit_release(const std::string& name, std::string_view id, bool& released) override;
    Status permit_extend(const std::string& name, std::string_view id,
                         std::chrono::milliseconds keep, bool& extended) override;
    Status permits_in_use(const std::string& name, int permits, int& in_use) override;
    Status latch_set(const std::string& name, std::int64_t count, std::chrono::milliseconds ttl,
                     bool& set) override;
    Status latch_count_down(const std::string& name, bool& opened) override;
    Status latch_count(const std::string& name, std::int64_t& count) override;
    bool latch_wait(const std::string& name, const AcquireOptions& how) override;
    Status put_if_held(const Holding& h, std::string_view key, std::string_view value,
                       Clock::time_point by, bool& put) override;
    /// A campaign's term, found by its token when it proclaims.
    void add_term(const std::string& token, const std::shared_ptr<ZkHolding>& h);

    // For claims.
    /// The live session for reads and administration: the current one, or a new one when it
    /// expired.
    Status session(std::shared_ptr<ZkSession>& out);
    /// The live session for nodes of holdings of ttl (ZkSessions::of_ttl): fails with
    /// invalid_argument for a ttl under the ensemble's shortest session.
    Status session_for(std::chrono::milliseconds ttl, std::shared_ptr<ZkSession>& out);
    /// Watches p's node once it is granted, without waiting for the answer: its deletion (or
    /// its session's end) marks the holding gone and has every holding checked at once.
    void watch_own(ZkPlace& p);
    /// Creates dir and its missing parents as containers (Curator's way: the server drops
    /// them once empty).
    Status make_dirs(ZkSession& s, const std::string& dir, Clock::time_point by);
    ClientImpl& client() { return client_; }
    /// A semaphore's leases' znode ("" for a name supports() refuses).
    static std::string leases_of(const std::string& name);
    /// p's node in dir's line: found again by its guid after a create whose reply was lost,
    /// else created as prefix + sequence with data (dir and its parents made when missing).
    /// listed: the line as read right behind the create, when it was. what names the
    /// acquisition in errors.
    Status put_in_line(ZkPlace& p, const std::string& dir, const std::string& prefix,
                       std::string_view data, const std::string& what, Clock::time_point by,
                       std::optional<ZkReply>& listed);
    /// Our node under dir whose name carries guid, after a create whose reply was lost: found
    /// once the server caught up with the leader, and only if this session owns it (node ""
    /// when there is none). Fails as the reads fail.
    Status find_own_node(ZkSession& s, const std::string& dir, const std::string& guid,
                         Clock::time_point by, std::string& node, std::int64_t& czxid);

  private:
    // Sets w on node of s (again, once it fired), unless it is set. Never blocks.
    void arm(const std::shared_ptr<ZkOwnWatch>& w, const std::shared_ptr<ZkSession>& s,
             const std::string& node);
    // Drops w: the release that follows deletes the node, which is no loss.
    static void disarm(ZkOwnWatch& w) noexcept;
    struct Alarm;
    // The engine may have dropped holdings: the client checks every one, on its loop, since
    // this runs on the C client's thread, which must not wait for a reply. One check at a time
    // is posted. Never blocks.
    static void raise(const std::shared_ptr<Alarm>& a);

    // Whether h's node is there and on its session, which lives: the verdict.
    Verdict look_at(const ZkHolding& h, Clock::time_point by);
    // A reentrant holding's node still counts holds of its owner; one of them given back.
    Verdict look_at_holds(const ZkHolding& h, Clock::time_point by);
    Verdict release_hold(const ZkHolding& h, Clock::time_point by);
    Verdict release_zk(const ZkHolding& h, Clock::time_point by);

    // A semaphore's state (a znode with "leases" among its children).
    Status semaphore_status(ZkSession& s, const std::string& dir, LockStatus& ls);

    ClientImpl& client_;
    std::mutex terms_m_;
    std::map<std::string, std::weak_ptr<ZkHolding>> terms_;  // by campaign token
    const std::unique_ptr<ZkSessions> sessions_;
    // What a session's or a watch's callback reaches the store through: either may fire after
    // the store stopped.
    struct Alarm {
        std::mutex m;
        ZkStore* store = nullptr;  // null once stopped
        bool pending = false;      // a check is posted and has not started
    };
    std::shared_ptr<Alarm> alarm_ = std::make_shared<Alarm>();
};

}  // namespace deadbolt::detail
