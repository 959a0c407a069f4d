// RedisStore: the seam's Redis side (DESIGN section 12) and the client's Redis state. A claim
// runs a shape's acquire script on one server, a cluster's slot(s) or every Redlock node, and
// sleeps on pub/sub; holdings are renewed, released and checked as pipelines of the lease
// kind's scripts.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "backends/redis/net/connection.hpp"
#include "backends/redis/net/endpoint.hpp"
#include "backends/redis/net/subscriber.hpp"
#include "backends/redis/spec_cache.hpp"
#include "backends/redis/topology/cluster.hpp"
#include "backends/redis/topology/nodes.hpp"
#include "backends/redis/topology/sentinel.hpp"
#include "backends/redis/topology/server.hpp"
#include "core/client_impl.hpp"
#include "core/store.hpp"

namespace deadbolt::detail {

class AsyncWaker;
class AsyncConnection;
class AsyncCluster;
struct RedisHolding;

class RedisStore final : public Store,
                         public Latches,
                         public Elections,
                         public Permits,
                         public RateLimits,
                         public Admin,
                         public FencedData {
  public:
    /// One server at e. c owns the store and outlives it.
    RedisStore(ClientImpl& c, const Endpoint& e);
    /// Redlock over these independent masters (the first one's options rule).
    RedisStore(ClientImpl& c, const std::vector<Endpoint>& redlock, bool fencing);
    /// A Redis Cluster (seeds[0]'s options rule) whose map is read already.
    RedisStore(ClientImpl& c, const std::vector<Endpoint>& seeds, std::shared_ptr<Cluster> cl);

    Status supports(const LockSpec& spec) const override;
    std::unique_ptr<Claim> open(const LockSpec& spec, std::stop_token cancel) override;
    std::vector<Verdict> extend(std::span<const Renewal> rs, Clock::time_point by) override;
    std::vector<Verdict> release(std::span<const Holding* const> hs, Clock::time_point by) override;
    std::vector<Verdict> check(std::span<const Holding* const> hs, Clock::time_point by) override;
    Clock::time_point deadline() const override;
    Clock::time_point deadline_for(std::chrono::milliseconds ttl) const override;
    bool late_yes_is_lost() const override;
    void stop() noexcept override;

    // Redlock keeps no latch, permits or bucket (redlock_why_not says why).
    Latches* latches() override { return nodes->redlock() ? nullptr : this; }
    Elections* elections() override { return this; }
    Permits* permits() override { return nodes->redlock() ? nullptr : this; }
    RateLimits* rate_limits() override { return nodes->redlock() ? nullptr : this; }
    Admin* admin() override { return this; }
    FencedData* fenced_data() override { return this; }
    Status keeps(Shape shape) const override;
    Status refusal(std::string_view what) const override;
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
    Status ping() override;

    /// The key of name: the client's prefix + name.
    std::string key_of(const std::string& name) const { return client.options.key_prefix + name; }

    /// The pub/sub connection, started on first use (a wait, or a holding: RedisClaim).
    Subscriber& subscriber();
    /// This client's inbox: where a release tells the one waiter it wakes.
    const std::string& inbox() const { return inbox_; }
    /// Where force-unlock names what it freed, for every client of this key prefix.
    const std::string& notices() const { return notices_; }
    /// A new holding: from now on, the client hears of its loss at once where the server can
    /// tell (a force-unlock's notice, a keyspace event, a restart seen by the subscriber).
    /// Starts the subscriber at the client's first holding; never waits for it.
    void watch(RedisHolding& h);
    /// The holding is over (released, or found not ours): its keyspace events are dropped.
    void unwatch(const Holding& h) noexcept;
    /// The connection of the asynchronous API on one server (or Sentinel's primary), made at
    /// first use; null elsewhere (a cluster has async_cluster(), Redlock its Nodes).
    /// Loop thread only.
    AsyncConnection* async_conn();
    /// The asynchronous API's router to a cluster's masters, made at first use; null on
    /// other topologies. Loop thread only.
    AsyncCluster* async_cluster();
    /// Whether call can run on the loop without blocking it: on one server, or a cluster
    /// when its keys share a slot (Redlock's rounds have their own way: Nodes).
    bool can_eval_async(const ScriptCall& call) const;
    /// Runs call on the loop where can_eval_async says so; done(status, reply) on the loop.
    void async_eval(const ScriptCall& call, Clock::time_point by,
                    std::function<void(Status, Reply)> done);
    void async_release(std::shared_ptr<const Holding> h, Clock::time_point by,
                       std::function<void(Verdict)> done) override;
    /// An AsyncWaker is armed (on) or not any more: armed ones hear of the subscriber's
    /// changes. Loop thread only.
    void armed(AsyncWaker* w, bool on);
    /// A failover moved the primary (Sentinel): every connection goes there, and every lease
    /// the new primary does not hold is reported lost.
    void primary_moved(const std::string& host, std::uint16_t port);

    ClientImpl& client;
    Endpoint ep;  // the first node's: its options are the client's
    std::shared_ptr<Connection>
        conn;                        // the single server, the first Redlock node; none on a cluster
    std::shared_ptr<Server> server;  // where keyed commands go: conn, or the cluster
    std::shared_ptr<Cluster> cluster;    // redis-cluster:// clients
    std::shared_ptr<Nodes> nodes;        // where leases live: server, or the Redlock nodes
    std::shared_ptr<Sentinel> sentinel;  // redis-sentinel:// clients: follows the primary

  private:
    /// leader(); on Redlock also what the message node alone says, into *messenger (when it
    /// answered).
    Status read_leader(const std::string& name, Leader& out, std::optional<Leader>* messenger);

    RedisStore(ClientImpl& c, Endpoint e, std::shared_ptr<Connection> conn,
               std::shared_ptr<Server> s, std::shared_ptr<Nodes> n);

    // Whether holdings concerning key (the name's, or a MultiLock's names') are doubted.
    void doubt_key(std::string key);

    SpecCache specs_;      // what open() built for Mutexes lately
    std::string inbox_;    // see inbox()
    std::string notices_;  // see notices()
    std::mutex sub_m_;
    std::unique_ptr<Subscriber> sub_;
    std::set<AsyncWaker*> armed_;                                         // loop thread only
    std::shared_ptr<const char> alive_ = std::make_shared<const char>();  // gone with the store
    // Set once, on the loop, under sub_m_ (primary_moved reads it from the sentinels' thread).
    std::shared_ptr<AsyncConnection> async_conn_;
    std::shared_ptr<AsyncCluster> async_cluster_;  // set once, on the loop
    std::atomic<bool> async_used_{false};          // async_conn_ or async_cluster_ is set
    bool listening_ = false;                       // the subscriber tells the loop of changes
    std::string moved_host_;  // where the primary is now, once a failover moved it (sub_m_)
    std::uint16_t moved_port_ = 0;
};

/// The Redis side of a client connected to Redis.
inline RedisStore& redis(const ClientImpl& c) {
    return static_cast<RedisStore&>(*c.store);
}

/// A client of Redis: its store is RedisStore(client, args...), and its options the first
/// endpoint's.
template <class... Args>
std::shared_ptr<ClientImpl> redis_client(const ClientOptions& options, const Args&... args) {
    return std::make_shared<ClientImpl>(
        options, [&](ClientImpl& c) { return std::make_shared<RedisStore>(c, args...); });
}

}  // namespace deadbolt::detail
