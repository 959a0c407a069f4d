#include "backends/redis/store.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "backends/redis/async_waker.hpp"
#include "backends/redis/claim.hpp"
#include "backends/redis/holding.hpp"
#include "backends/redis/keys.hpp"
#include "backends/redis/net/async_connection.hpp"
#include "backends/redis/net/closing.hpp"
#include "backends/redis/net/status.hpp"
#include "backends/redis/topology/cluster_async.hpp"
#include "backends/redis/topology/redlock.hpp"
#include "core/quorum.hpp"

namespace deadbolt::detail {
namespace {

const RedisHolding& as_redis(const Holding* h) {
    return static_cast<const RedisHolding&>(*h);
}

// What a lease script answers: 1 = yes, 0 = no (extend, check); a release answers n >= 1 =
// yes, having woken n - 1 waiters.
enum class Answer : unsigned char { one_or_zero, woken_plus_one };

// A lease script's reply as a verdict; unknown for anything but an integer (an error reply
// says why).
Verdict verdict_of(const Reply& r, Answer answer) {
    if (r.type == Reply::Type::integer) {
        if (answer == Answer::one_or_zero) return r.integer == 1 ? Verdict::yes() : Verdict::no();
        return r.integer >= 1 ? Verdict::yes(static_cast<int>(r.integer - 1)) : Verdict::no();
    }
    if (r.is_error() && r.str.starts_with("NOQUORUM "))  // Nodes' undecided majority
        return Verdict::unknown(Status::error(errc::no_quorum, r.str.substr(9)));
    if (r.is_error()) return Verdict::unknown(from_server_error(r.str));
    return Verdict::unknown(Status::error(errc::protocol_error, "unexpected lease script reply"));
}

// Runs calls on the nodes (a majority's verdicts on Redlock) or, with node set, on that
// Redlock node alone; one verdict per call.
std::vector<Verdict> run(Nodes& nodes, std::span<const ScriptCall> calls, Clock::time_point by,
                         std::optional<std::size_t> node, Answer answer) {
    std::vector<Reply> replies;
    Status st = node ? eval_many(nodes.node(*node), calls, replies, by)
                     : nodes.eval_many(calls, replies, by);
    std::vector<Verdict> out;
    out.reserve(calls.size());
    for (std::size_t i = 0; i < calls.size(); ++i)
        out.push_back(st.ok() ? verdict_of(replies[i], answer) : Verdict::unknown(st));
    return out;
}

}  // namespace

Status RedisStore::supports(const LockSpec& spec) const {
    return nodes->redlock() ? redlock_supports(spec) : Status{};
}

Status RedisStore::keeps(Shape shape) const {
    if (!nodes->redlock()) return {};
    if (shape == Shape::fair) return refusal("FairMutex");
    if (shape == Shape::permits) return refusal("Semaphore");
    return {};
}

Status RedisStore::refusal(std::string_view what) const {
    if (what == HeldWrites::kWhat)
        return Status::error(
            errc::invalid_argument,
            "a write checked against the lock in the same step is offered on etcd, ZooKeeper "
            "and PostgreSQL: Redis keeps the lock and your data apart; guard the data by the "
            "lease's fence instead (Client::fenced_set / fenced_cas)");
    std::string_view why = nodes->redlock() ? redlock_why_not(what) : std::string_view{};
    if (why.empty()) return Store::refusal(what);
    return Status::error(errc::invalid_argument,
                         fmt::format("{} is not available over redlock://: {}. {}; use a redis:// "
                                     "URL for {}",
                                     what, why, kRedlockOffers, what));
}

std::unique_ptr<Claim> RedisStore::open(const LockSpec& spec, std::stop_token cancel) {
    const bool cached = spec.shape == Shape::exclusive;  // the others' specs vary by call
    std::shared_ptr<const RedisSpec> made =
        cached ? specs_.find(spec.name, spec.options.ttl, spec.options.waiter_ttl) : nullptr;
    if (!made) {
        RedisSpec rs = redis_spec(client.options.key_prefix, spec);
        if (nodes->redlock() && !nodes->fencing() && rs.script == &acquire_script()) {
            rs.script = &unfenced_acquire_script();
            rs.fenced = false;
        }
        made = std::make_shared<const RedisSpec>(std::move(rs));
        if (cached) specs_.keep(made);
    }
    return std::make_unique<RedisClaim>(client, std::move(made), std::move(cancel));
}

std::vector<Verdict> RedisStore::extend(std::span<const Renewal> rs, Clock::time_point by) {
    std::vector<std::string> px(rs.size());
    std::vector<ScriptCall> calls;
    calls.reserve(rs.size());
    for (std::size_t i = 0; i < rs.size(); ++i) {
        const RedisHolding& h = as_redis(rs[i].holding);
        px[i] = std::to_string(rs[i].keep.count());
        calls.push_back(h.lease_call(*h.kind->extend, px[i]));
    }
    auto out = run(*nodes, calls, by, std::nullopt, Answer::one_or_zero);
    // Not confirmed by enough replicas: not extended, as far as anyone can rely on.
    if (Status st = nodes->confirm_replicated(calls, client.deadline()); !st.ok())
        for (auto& v : out)
            if (v.is == Verdict::Is::yes) v = Verdict::unknown(st);
    return out;
}

std::vector<Verdict> RedisStore::release(std::span<const Holding* const> hs, Clock::time_point by) {
    // One pipeline per target: the majority of every node, or one Redlock node.
    std::map<std::optional<std::size_t>, std::vector<std::size_t>> by_target;
    for (std::size_t i = 0; i < hs.size(); ++i) by_target[as_redis(hs[i]).node].push_back(i);
    std::vector<Verdict> out(hs.size());
    for (const auto& [node, which] : by_target) {
        std::vector<std::string> px(which.size());
        std::vector<ScriptCall> calls;
        calls.reserve(which.size());
        for (std::size_t k = 0; k < which.size(); ++k) {
            const RedisHolding& h = as_redis(hs[which[k]]);
            px[k] = std::to_string(h.px.count());
            calls.push_back(h.call(*h.release, px[k]));
        }
        auto verdicts = run(*nodes, calls, by, node, Answer::woken_plus_one);
        for (std::size_t k = 0; k < which.size(); ++k) out[which[k]] = std::move(verdicts[k]);
    }
    for (std::size_t i = 0; i < hs.size(); ++i)
        if (out[i].is != Verdict::Is::unknown) unwatch(*hs[i]);  // over, either way
    return out;
}

std::vector<Verdict> RedisStore::check(std::span<const Holding* const> hs, Clock::time_point by) {
    std::vector<std::string> px(hs.size());
    std::vector<ScriptCall> calls;
    calls.reserve(hs.size());
    for (std::size_t i = 0; i < hs.size(); ++i) {
        const RedisHolding& h = as_redis(hs[i]);
        px[i] = std::to_string(h.px.count());
        calls.push_back(h.lease_call(*h.kind->check, px[i]));
    }
    return run(*nodes, calls, by, std::nullopt, Answer::one_or_zero);
}

Clock::time_point RedisStore::deadline() const {
    return client.deadline();
}

Clock::time_point RedisStore::deadline_for(std::chrono::milliseconds ttl) const {
    if (!nodes->redlock()) return deadline();
    return Clock::now() + node_timeout(ttl, client.options.command_timeout);
}

bool RedisStore::late_yes_is_lost() const {
    return nodes->redlock();
}

void RedisStore::stop() noexcept {
    if (sentinel) sentinel->stop();
    if (cluster) cluster->stop();
    // What the loop connections carry goes out first (a waiter's abandon): dropped, it would
    // keep a place in line for its waiter_ttl. Only one of them is ever made, and it is
    // complete once async_used_ is set.
    if (async_used_) {
        if (async_conn_) close_all(client.loop(), std::vector{async_conn_});
        if (async_cluster_) close_all(client.loop(), std::vector{async_cluster_});
    }
    nodes->stop();
    std::lock_guard lk(sub_m_);
    if (sub_) sub_->listen(nullptr);  // the loop stops before the subscriber
}

AsyncConnection* RedisStore::async_conn() {
    if (!conn || cluster || nodes->redlock()) return nullptr;
    if (!async_conn_) {
        // Made where the primary is now: a failover reaches the blocking connection only at
        // its next request (and its endpoint is that thread's), and one after this is posted
        // here by primary_moved, which reads async_conn_ under sub_m_ too.
        std::lock_guard lk(sub_m_);
        Endpoint at = ep;
        if (moved_port_ != 0) at.host = moved_host_, at.port = moved_port_;
        async_conn_ = std::make_shared<AsyncConnection>(client.loop(), std::move(at));
        async_used_ = true;
    }
    return async_conn_.get();
}

AsyncCluster* RedisStore::async_cluster() {
    if (!cluster) return nullptr;
    if (!async_cluster_) {
        async_cluster_ = std::make_shared<AsyncCluster>(client.loop(), cluster);
        async_used_ = true;
    }
    return async_cluster_.get();
}

void RedisStore::async_release(std::shared_ptr<const Holding> h, Clock::time_point by,
                               std::function<void(Verdict)> done) {
    const RedisHolding& rh = as_redis(h.get());
    std::string px = std::to_string(rh.px.count());
    if (nodes->redlock() && !rh.node) {
        auto call = std::make_shared<std::vector<OwnedCall>>(1, owned(rh.call(*rh.release, px)));
        return nodes->async_eval_many(
            call, by,
            [this, alive = std::weak_ptr<const char>(alive_), h, done = std::move(done)](
                const Status& st, std::vector<Reply> r) {
                Verdict v =
                    st.ok() ? verdict_of(r.front(), Answer::woken_plus_one) : Verdict::unknown(st);
                if (v.is != Verdict::Is::unknown && !alive.expired()) unwatch(*h);
                done(std::move(v));
            });
    }
    ScriptCall call = rh.call(*rh.release, px);
    if (!can_eval_async(call)) return Store::async_release(std::move(h), by, std::move(done));
    // The reply may come after the store is gone: a client whose last handle went in one of
    // its loop's handlers ends there, and the loop drains what was in flight (alive_ says).
    async_eval(call, by,
               [this, alive = std::weak_ptr<const char>(alive_), h, done = std::move(done)](
                   const Status& st, const Reply& r) {
                   Verdict v =
                       st.ok() ? verdict_of(r, Answer::woken_plus_one) : Verdict::unknown(st);
                   if (v.is != Verdict::Is::unknown && !alive.expired()) unwatch(*h);
                   done(std::move(v));
               });
}

bool RedisStore::can_eval_async(const ScriptCall& call) const {
    return (conn && !nodes->redlock()) || (cluster && !spans_slots(call.keys));
}

void RedisStore::async_eval(const ScriptCall& call, Clock::time_point by,
                            std::function<void(Status, Reply)> done) {
    if (cluster) return async_cluster()->eval(call, by, std::move(done));
    async_conn()->eval(call, by, std::move(done));
}

void RedisStore::armed(AsyncWaker* w, bool on) {
    if (!on) {
        armed_.erase(w);
        return;
    }
    armed_.insert(w);
    if (listening_) return;
    listening_ = true;
    subscriber().listen([this, &loop = client.loop()] {
        // The loop may run this after the store is gone (a client that died in one of its
        // own handlers, whose loop then drains what was queued): alive_ says.
        loop.post([this, alive = std::weak_ptr<const char>(alive_)] {
            if (alive.expired()) return;
            // A waker's callback may disarm others: look at those still armed, each once.
            auto now = armed_;
            for (auto* one : now)
                if (armed_.count(one)) one->look();
        });
    });
}

namespace {

std::shared_ptr<Server> one_server(const std::shared_ptr<Connection>& c) {
    const auto& o = c->endpoint().redis;
    return std::make_shared<OneServer>(
        c, o.sync_replicas > 0 ? 1 : static_cast<std::size_t>(o.command_connections));
}

}  // namespace

RedisStore::RedisStore(ClientImpl& c, const Endpoint& e)
    : RedisStore(c, e, std::make_shared<Connection>(e), {}, {}) {}

RedisStore::RedisStore(ClientImpl& c, const std::vector<Endpoint>& redlock, bool fencing)
    : RedisStore(
          c, redlock.front(), {}, {},
          std::make_shared<Nodes>(redlock, fencing, [&c]() -> EventLoop& { return c.loop(); })) {}

RedisStore::RedisStore(ClientImpl& c, const std::vector<Endpoint>& seeds,
                       std::shared_ptr<Cluster> cl)
    : RedisStore(c, seeds.front(), {}, cl, {}) {
    cluster = std::move(cl);
}

// conn, server and nodes each follow from the one given: a server's connection makes a
// Server, a Server makes single-server Nodes, and Redlock's Nodes name their first node.
RedisStore::RedisStore(ClientImpl& c, Endpoint e, std::shared_ptr<Connection> cn,
                       std::shared_ptr<Server> s, std::shared_ptr<Nodes> n)
    : client(c),
      ep(std::move(e)),
      conn(cn  ? std::move(cn)
           : n ? n->first()
               : nullptr),
      server(s ? std::move(s) : one_server(conn)),
      nodes(n ? std::move(n) : std::make_shared<Nodes>(server)),
      // One subscriber per client and prefix: the ACL's channel pattern ({prefix*) covers them.
      inbox_(
          aux_key(c.options.key_prefix + "deadbolt", "inbox:" + c.id.substr(c.id.rfind(':') + 1))),
      notices_(aux_key(c.options.key_prefix + "deadbolt", "freed")) {}

Subscriber& RedisStore::subscriber() {
    std::lock_guard lk(sub_m_);
    if (!sub_) {
        std::function<std::vector<Subscriber::Address>()> others;
        if (cluster) {  // every node carries every release message (cluster-wide PUBLISH)
            others = [weak = std::weak_ptr<Cluster>(cluster)] {
                std::vector<Subscriber::Address> out;
                if (auto c = weak.lock())
                    for (auto& a : c->nodes()) out.emplace_back(a.host, a.port);
                return out;
            };
        } else if (nodes->redlock()) {
            // Each Redlock node publishes the releases it took part in, so any node of the
            // holder's majority will do when the first is down.
            std::vector<Subscriber::Address> all;
            for (std::size_t i = 0; i < nodes->size(); ++i)
                all.emplace_back(nodes->node(i).endpoint().host, nodes->node(i).endpoint().port);
            others = [all] { return all; };
        }
        SubscriberHooks hooks;
        hooks.inbox = inbox_;
        hooks.notices = notices_;
        // Keyspace events are each node's own: on a cluster the subscriber hears one node of
        // many, and on Redlock one node's loss is not the lock's.
        hooks.keyspace = !cluster && !nodes->redlock();
        hooks.freed = [this, prefix = client.options.key_prefix](std::string_view name) {
            doubt_key(prefix + std::string(name));
        };
        hooks.key_gone = [this](std::string_view key) { doubt_key(std::string(key)); };
        // A server that restarted without persistence forgot every holding: its subscriber
        // hears of it at once (no need to wait for the next renewal).
        hooks.reconnected = [this] {
            if (on_doubt_of) on_doubt_of({});
        };
        sub_ = std::make_unique<Subscriber>(ep, std::move(others), std::move(hooks));
        if (moved_port_ != 0) sub_->retarget(moved_host_, moved_port_);
    }
    return *sub_;
}

void RedisStore::doubt_key(std::string key) {
    if (!on_doubt_of) return;
    on_doubt_of([key = std::move(key)](const Holding& h) {
        const auto& keys = as_redis(&h).keys();
        return std::find(keys.begin(), keys.end(), key) != keys.end();
    });
}

void RedisStore::watch(RedisHolding& h) {
    Subscriber& s = subscriber();  // the first holding starts it: force-unlock's notices
    if (cluster || nodes->redlock()) return;
    std::shared_ptr<RedisHolding::Watch> w;  // none while the server sends no events
    for (auto key : h.main_keys()) {
        if (!s.watch_key(key)) continue;
        if (!w) w = std::make_shared<RedisHolding::Watch>();
        w->keys.emplace_back(key);
    }
    if (w) h.watching = std::move(w);
}

void RedisStore::unwatch(const Holding& h) noexcept {
    const auto& w = as_redis(&h).watching;
    if (!w || !w->on.exchange(false)) return;
    try {
        for (const auto& key : w->keys) subscriber().unwatch_key(key);
    } catch (...) {
        // Out of memory queueing UNSUBSCRIBE: the interest lingers; its events find nothing.
    }
}

void RedisStore::primary_moved(const std::string& host, std::uint16_t port) {
    std::shared_ptr<AsyncConnection> async;
    {
        std::lock_guard lk(sub_m_);
        moved_host_ = host;
        moved_port_ = port;
        if (sub_) sub_->retarget(host, port);
        async = async_conn_;
    }
    if (auto* one = dynamic_cast<OneServer*>(server.get()))
        one->retarget(host, port);  // every connection it opened
    else
        conn->retarget(host, port);
    if (async) client.loop().post([async, host, port] { async->retarget(host, port); });
    if (on_doubt) on_doubt();  // the new primary may not hold what we held
}

}  // namespace deadbolt::detail
