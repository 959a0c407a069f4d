// PgPermitClaim: one acquisition of a Semaphore's permit on PostgreSQL. A permit is a row of
// `permits` with an expiry in the server's clock (so a holder that vanishes gives it back
// at its TTL, with no session kept for it); a waiter lines up at a gate, the session advisory
// lock on the semaphore's key, in the server's FIFO queue. Only the gate's holder counts the
// rows, takes one when fewer than N are live, and otherwise listens: a release notifies it
// (release_permit), and the earliest row's expiry is its own deadline. So waiters are served
// first come, first served, and none of them but the first runs a statement while it waits.
// A ReentrantMutex is a semaphore of one permit whose row counts its owner's holds: the
// owner's next lock takes one hold more without the gate (where a waiter may stand for the
// owner's release), and the last release deletes the row.
#pragma once

#include <cstdint>
#include <memory>
#include <stop_token>
#include <string>

#include "backends/postgres/conn.hpp"
#include "backends/sql/cancel_fd.hpp"
#include "backends/sql/store.hpp"
#include "core/lock_spec.hpp"
#include "core/store.hpp"

namespace deadbolt::detail {

class PgPermitClaim final : public Claim {
  public:
    PgPermitClaim(SqlStore& store, const LockSpec& spec, std::string schema,
                  std::stop_token cancel);
    ~PgPermitClaim() override;
    PgPermitClaim(const PgPermitClaim&) = delete;
    PgPermitClaim& operator=(const PgPermitClaim&) = delete;

    const ClaimTraits& traits() const override { return traits_; }
    void attempt(const std::string& token, std::chrono::milliseconds keep, Attempted& a,
                 Fences& f) override;
    Status confirm() override { return {}; }
    std::shared_ptr<Holding> holding(const std::string& token, std::chrono::milliseconds keep,
                                     std::uint64_t fence) const override;
    std::shared_ptr<Holding> waiter(const std::string& token,
                                    std::chrono::milliseconds keep) const override {
        return holding(token, keep, 0);
    }

    // The wake-ups are the wait at the gate and, past it, the LISTEN an attempt sets up.
    Status arm(Clock::time_point /*until*/) override { return {}; }
    void disarm() noexcept override {}
    void wait(Clock::time_point until) override;

  private:
    // Leaves the gate and stops listening, then pools the session (closes it on failure).
    void drop_session() noexcept;

    SqlStore& store_;
    const LockSpec spec_;
    const std::string schema_;
    const std::string key_;  // the semaphore's advisory key: the gate's, and its rows'
    const int permits_;      // 0: a ReentrantMutex's row (one holder at a time)
    const bool reenter_;     // a ReentrantMutex's owner takes one hold more of its holding
    std::stop_token cancel_;
    ClaimTraits traits_;
    std::shared_ptr<PgConn> session_;  // the one the attempts and waits run on
    bool at_gate_ = false;             // the session holds the gate
    bool listening_ = false;           // ... and listens for releases
    CancelFd wake_;
};

}  // namespace deadbolt::detail
