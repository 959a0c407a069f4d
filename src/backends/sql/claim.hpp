// SqlClaim: one acquisition of a database's session lock. An attempt takes the lock's keys
// without waiting on a session of its own, drawing the fence in the same round trip; a
// refused one waits inside the server for the first key it lacks (bounded by the server's
// lock timeout), where the server queues waiters and hands the lock over when its holder
// lets go or its session ends. A MultiLock takes its keys in sorted order and keeps the ones
// it got while it waits for the next (so two MultiLocks never wait for each other). Cancel
// closes the waiting session: the server drops its place in the queue.
#pragma once

#include <memory>
#include <span>
#include <stop_token>
#include <string>
#include <vector>

#include "backends/sql/cancel_fd.hpp"
#include "backends/sql/holding.hpp"
#include "backends/sql/store.hpp"
#include "core/by_token.hpp"
#include "core/lock_spec.hpp"
#include "core/store.hpp"

namespace deadbolt::detail {

class SqlClaim final : public Claim {
  public:
    SqlClaim(SqlStore& store, const LockSpec& spec, std::stop_token cancel);
    ~SqlClaim() override;
    SqlClaim(const SqlClaim&) = delete;
    SqlClaim& operator=(const SqlClaim&) = delete;

    const ClaimTraits& traits() const override { return traits_; }
    void attempt(const std::string& token, std::chrono::milliseconds keep, Attempted& a,
                 Fences& f) override;
    Status confirm() override { return {}; }
    std::shared_ptr<Holding> holding(const std::string& token, std::chrono::milliseconds keep,
                                     std::uint64_t fence) const override;
    std::shared_ptr<Holding> waiter(const std::string& token,
                                    std::chrono::milliseconds keep) const override;

    // The wake-up is the wait inside the server: nothing to arm.
    Status arm(Clock::time_point /*until*/) override { return {}; }
    void disarm() noexcept override {}
    void wait(Clock::time_point until) override;

    // Between acquisitions the claim keeps its spec, keys and traits; the session, the
    // places and the cancel are the acquisition's.
    bool recycle() noexcept override;
    void reopen(const std::stop_token& cancel) override;

  private:
    // The session leaves the claim: into a holding for token (granted as g, or unknown).
    void hand_over(const std::string& token, std::string farewell = {}, SqlGrant g = {});
    // The session goes back to the pool when it holds nothing, else it is closed.
    void drop_session() noexcept;

    SqlStore& store_;
    const LockSpec spec_;
    std::stop_token cancel_;
    ClaimTraits traits_;
    std::span<const std::string> names_;  // a MultiLock's, or the one name (in spec_)
    SqlHolding::Keys keys_;               // theirs, in the order they are taken
    bool shared_ = false;
    std::shared_ptr<SqlSession> session_;  // the one the attempts and waits run on
    std::size_t held_ = 0;                 // keys_[0, held_) are held on it
    ByToken<SqlHolding> places_;           // where each token's session went
    std::string try_sql_;  // the last try's statement, for keys from try_from_ and try_ttl_
    std::size_t try_from_ = static_cast<std::size_t>(-1);
    std::chrono::milliseconds try_ttl_{-1};
    CancelFd wake_;  // a wait in the server ends at cancel
    // Until when this client trusts all of names_ recorded (SqlStore::naming): a claim kept
    // by its lock object asks the store, under its mutex, only once in kNameTrust.
    Clock::time_point names_trusted_until_{};
};

}  // namespace deadbolt::detail
