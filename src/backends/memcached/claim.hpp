// McClaim: one acquisition on memcached. An attempt adds the lock's item with the token (and
// draws a fence beside it in the same round trip); a refused one looks again after a capped,
// jittered backoff, since memcached cannot tell anyone that an item went. Threads of one
// process queue in the process first, so only one of them looks.
#pragma once

#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include "backends/memcached/holding.hpp"
#include "backends/memcached/store.hpp"
#include "core/by_token.hpp"
#include "core/lock_spec.hpp"
#include "core/store.hpp"

namespace deadbolt::detail {

/// How a waiter on memcached spaces its looks: from kFirstLook, doubling, up to kLongestLook,
/// half of each randomised (README, "Memcached": the cost per waiter).
inline constexpr std::chrono::milliseconds kFirstLook{10}, kLongestLook{500};

/// Sleeps before look number `look` (its backoff from kFirstLook to kLongestLook), ending at
/// until or at a stop request if sooner.
void mc_nap(unsigned look, Clock::time_point until, std::stop_token stop);

class McClaim final : public Claim {
  public:
    McClaim(McStore& store, const LockSpec& spec, std::stop_token cancel);

    const ClaimTraits& traits() const override { return traits_; }
    void attempt(const std::string& token, std::chrono::milliseconds keep, Attempted& a,
                 Fences& f) override;
    Status confirm() override { return {}; }
    std::shared_ptr<Holding> holding(const std::string& token, std::chrono::milliseconds keep,
                                     std::uint64_t fence) const override;
    std::shared_ptr<Holding> waiter(const std::string& /*token*/,
                                    std::chrono::milliseconds /*keep*/) const override {
        return nullptr;  // a waiter leaves nothing in memcached
    }

    // Nothing to arm: the wait is a timed look.
    Status arm(Clock::time_point /*until*/) override { return {}; }
    void disarm() noexcept override {}
    void wait(Clock::time_point until) override;

    // Between acquisitions the claim keeps its spec, keys and traits, and its requests' room;
    // the grants, the backoff and the cancel are the acquisition's.
    bool recycle() noexcept override;
    void reopen(const std::stop_token& cancel) override;

  private:
    void add(const std::string& token, std::chrono::milliseconds keep, Attempted& a, Fences& f);
    // A waiter's look: true (with a.pttl) while a majority of servers still hold a name.
    bool still_held(Attempted& a);
    void reenter(const std::string& token, std::chrono::milliseconds keep, Attempted& a, Fences& f);
    void take_permit(const std::string& token, std::chrono::milliseconds keep, Attempted& a);
    // Raises the fence counters of the granting servers to fences (Redlock's second round):
    // ok once a majority holds them, so that any later majority sees them.
    // counters: server i's counter of name k at i * names + k.
    Status raise_fences(const std::vector<std::uint64_t>& counters,
                        const std::vector<bool>& granted, const std::vector<std::uint64_t>& fences);
    std::shared_ptr<McHolding> made(const std::string& token, McKeyList keys);

    McStore& store_;
    const LockSpec spec_;
    std::stop_token cancel_;
    ClaimTraits traits_;
    std::vector<McKeys> keys_;  // each name's, in the names' order
    // Each name's lock item key, made once and shared by the holdings made of them.
    McKeyList locks_;
    std::vector<std::string> fences_;  // each name's fence counter key
    unsigned looks_ = 0;               // waits so far: the backoff's step
    bool refused_ = false;             // the last attempt was refused: look before adding
    ByToken<McHolding> grants_;        // what each token's attempt wrote
    // An attempt's requests and answers, one per server, and a waiter's look: their room is
    // reused from one attempt to the next.
    std::vector<McRequest> reqs_, look_reqs_;
    std::vector<McAnswer> answers_, looked_;
    std::vector<bool> got_;                // the servers that granted every name
    std::vector<std::uint64_t> counters_;  // server i's fence counter of name k at i * K + k
    std::vector<std::uint64_t> drawn_;     // each name's fence
    std::string draw_;                     // the fence counter's flags
};

}  // namespace deadbolt::detail
