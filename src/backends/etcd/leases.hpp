// The client's etcd leases (etcd's concurrency.Session): the lease every holding and waiter
// of one TTL shares, kept alive on the client's one KeepAlive stream every third of its TTL
// as long as the client lives; and leases of their own for holdings that must expire by
// themselves (auto_renew off, max_hold), kept only while their claim waits and by renewals.
// A lease is gone when a keepalive answers TTL <= 0, or when no answer came within its TTL.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "backends/etcd/channel.hpp"
#include "backends/etcd/stream.hpp"
#include "core/store.hpp"

namespace deadbolt::detail {

struct EtcdLease {
    std::int64_t id = 0;
    std::chrono::seconds ttl{0};
    std::atomic<bool> background{false};  // kept alive by the client's ticker
    std::atomic<bool> gone{false};        // expired or revoked: its keys are deleted

    /// The send time of the last keepalive (or the grant) that found it alive: the server
    /// keeps it at least ttl from then.
    Clock::time_point kept_from() const {
        return Clock::time_point(Clock::duration(kept_rep_.load(std::memory_order_acquire)));
    }
    void kept(Clock::time_point sent) {
        auto rep = sent.time_since_epoch().count();
        for (auto old = kept_rep_.load();
             old < rep && !kept_rep_.compare_exchange_weak(old, rep);) {
        }
    }
    /// Gone, or silent for longer than its TTL.
    bool dead(Clock::time_point now) const { return gone || now >= kept_from() + ttl; }

    std::atomic<Clock::rep> kept_rep_{0};
    std::atomic<Clock::rep> last_sent_{0};  // the ticker's: the last keepalive sent
};

class Leases {
  public:
    /// on_gone: a lease was found gone (its keys with it): holdings should be checked.
    Leases(std::shared_ptr<EtcdChannel> ch, std::function<void()> on_gone);
    /// Stops keeping leases; revokes the shared ones (and so their waiters' keys).
    ~Leases();
    Leases(const Leases&) = delete;
    Leases& operator=(const Leases&) = delete;

    /// The lease shared by everything of ttl (whole seconds, rounded up), granted on first
    /// use and again once it is gone. Fails with invalid_argument when ttl is under the
    /// server's minimum lease TTL, or as the grant failed.
    Status shared(std::chrono::milliseconds ttl, Clock::time_point by,
                  std::shared_ptr<EtcdLease>& out);
    /// A new lease of its own for ttl, kept in the background while `background` is set.
    Status own(std::chrono::milliseconds ttl, Clock::time_point by,
               std::shared_ptr<EtcdLease>& out);
    /// Lease id, made by anyone (a ReentrantMutex's owner on another client): this client's
    /// record of it, or a new one whose kept_from is as late as the server's remaining TTL
    /// allows. Fails with not_owner when it is gone, or as the server was not reached.
    Status adopt(std::int64_t id, Clock::time_point by, std::shared_ptr<EtcdLease>& out);
    /// One keepalive for each lease now: yes (alive; kept_from moves to now), no (gone), or
    /// unknown with why (no answer by `by`).
    /// A lease another client made (a permit extended by id) is kept through `foreign`.
    std::vector<Verdict> keep(std::span<EtcdLease* const> leases, Clock::time_point by,
                              const std::shared_ptr<EtcdLease>& foreign = {});
    /// Revokes lease (deleting its keys): yes, no (it was gone already) or unknown.
    Verdict revoke(EtcdLease& lease, Clock::time_point by);

  private:
    struct Pending {
        std::weak_ptr<EtcdLease> lease;
        Clock::time_point sent;
        bool done = false;
        std::int64_t ttl = 0;  // as answered; <= 0: gone
        Status failed;
    };
    using KeepStream =
        BidiStream<etcdserverpb::LeaseKeepAliveRequest, etcdserverpb::LeaseKeepAliveResponse>;

    Status grant(std::chrono::milliseconds ttl, Clock::time_point by,
                 std::shared_ptr<EtcdLease>& out);
    std::shared_ptr<Pending> send(const std::shared_ptr<EtcdLease>& lease);
    void answered(const etcdserverpb::LeaseKeepAliveResponse& r);
    void broken();
    void tick_loop();

    std::shared_ptr<EtcdChannel> ch_;
    std::function<void()> on_gone_;
    std::mutex m_;
    std::condition_variable cv_;  // an answer came, or the stream broke
    std::map<std::int64_t, std::vector<std::shared_ptr<Pending>>> pending_;  // per lease, FIFO
    std::map<std::int64_t, std::weak_ptr<EtcdLease>> by_id_;                 // every lease made
    std::map<std::int64_t, std::shared_ptr<EtcdLease>> shared_;              // by TTL in seconds
    std::int64_t min_ttl_ = 0;  // the server's minimum, once learned
    std::mutex grant_m_;        // one grant of a shared lease at a time
    bool stop_ = false;
    std::unique_ptr<KeepStream> stream_;
    std::thread ticker_;  // last
};

}  // namespace deadbolt::detail
