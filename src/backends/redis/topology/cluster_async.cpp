#include "backends/redis/topology/cluster_async.hpp"

#include <fmt/format.h>

#include <asio/steady_timer.hpp>

#include <optional>

#include "backends/redis/keys.hpp"
#include "backends/redis/net/status.hpp"
#include "backends/redis/topology/slots.hpp"
#include "core/backoff.hpp"

namespace deadbolt::detail {
namespace {

// Redirections one request may follow, as the blocking Cluster.
constexpr unsigned kMaxRounds = 16;

}  // namespace

// One script's way to its slot's master: a hop per redirection, a pause per passing state.
struct AsyncCluster::Journey : std::enable_shared_from_this<Journey> {
    std::shared_ptr<AsyncCluster> keep;  // a pausing journey outlives the store's stop()
    AsyncCluster& router;
    OwnedCall call;
    std::uint16_t slot;
    Clock::time_point deadline;
    std::function<void(Status, Reply)> done;
    std::optional<NodeAddress> ask;
    unsigned round = 0;
    Status last;  // why the last hop did not settle it
    Reply last_reply;
    std::shared_ptr<void> context;  // the loop's context outlives our timer
    asio::steady_timer timer;

    Journey(AsyncCluster& r, const ScriptCall& c, Clock::time_point by,
            std::function<void(Status, Reply)> d)
        : keep(r.shared_from_this()),
          router(r),
          call(owned(c)),
          slot(c.keys.empty() ? std::uint16_t{0} : key_slot(c.keys.front())),
          deadline(by),
          done(std::move(d)),
          context(r.loop_.keepalive()),
          timer(r.loop_.io()) {
        ++router.journeys_;
    }

    void hop() {
        if (router.closed_)
            return finish(Status::error(errc::connection_lost, "the client is closing"), {});
        if (round++ >= kMaxRounds || Clock::now() >= deadline)
            return finish(last, std::move(last_reply));
        NodeAddress where = ask ? *ask : router.cluster_->owner_of(slot);
        if (where.host.empty()) {
            last = Status::error(errc::busy, fmt::format("no master serves slot {}: the cluster "
                                                         "is failing over or not fully set up",
                                                         slot));
            router.cluster_->reread_soon();
            return pause();
        }
        auto conn = router.to(where);
        auto answered = [self = shared_from_this(), conn, asked = ask.has_value()](
                            Status st, std::vector<Reply> r) {
            if (st.ok() && asked) r.erase(r.begin());  // ASKING's +OK
            self->answered(std::move(st), r.empty() ? Reply{} : std::move(r.front()), *conn, asked);
        };
        if (ask) {
            // Sent once to the importing node; EVAL, as it may never have seen the script.
            ask.reset();
            std::string bytes;
            encode_command(bytes, std::vector<std::string_view>{"ASKING"});
            ScriptCall v = call.view();
            encode_eval(bytes, *v.script, v.keys, v.args);
            return conn->exec(std::move(bytes), 2, deadline, std::move(answered));
        }
        conn->eval(call.view(), deadline, [answered](Status st, Reply r) {
            std::vector<Reply> one;
            one.push_back(std::move(r));
            answered(std::move(st), std::move(one));
        });
    }

    // asked_last: the reply came from an importing node, after ASKING.
    void answered(Status st, Reply r, const AsyncConnection& from, bool asked_last) {
        if (!st.ok()) {
            if (!nothing_sent(st)) return finish(std::move(st), {});
            last = std::move(st);  // a failover may have moved its slots
            router.cluster_->reread_soon();
            return pause();
        }
        if (!r.is_error()) return finish({}, std::move(r));
        Redirect to = parse_redirect(r.str);
        if (to.kind == Redirect::Kind::none && !is_cluster_retry(r.str))
            return finish({}, std::move(r));  // the script's own error: the caller reads it
        last = from_server_error(r.str);
        last_reply = std::move(r);
        if (to.to.host.empty()) to.to.host = from.endpoint().host;
        switch (to.kind) {
            case Redirect::Kind::moved:
                router.cluster_->moved(to.slot, to.to);
                router.cluster_->reread_soon();  // others may have moved with it
                return hop();
            case Redirect::Kind::ask:
                ask = to.to;
                return hop();
            case Redirect::Kind::none:
                if (last_reply.str.starts_with("TRYAGAIN") && !call.fallback_keys.empty()) {
                    // Nothing ran: at once, without the key the move lacks, where it went.
                    call.keys = std::move(call.fallback_keys);
                    call.fallback_keys.clear();
                    if (asked_last) ask = NodeAddress{from.endpoint().host, from.endpoint().port};
                    return hop();
                }
                return pause();  // TRYAGAIN, CLUSTERDOWN: nothing ran; soon again
        }
    }

    void pause() {
        auto nap =
            jittered_backoff(round, std::chrono::milliseconds(10), std::chrono::milliseconds(200));
        timer.expires_at(std::min<Clock::time_point>(Clock::now() + nap, deadline));
        timer.async_wait([self = shared_from_this()](std::error_code) { self->hop(); });
    }

    void finish(Status st, Reply r) {
        auto d = std::move(done);
        done = nullptr;
        if (!d) return;
        --router.journeys_;
        d(std::move(st), std::move(r));
        router.drain_check();
    }
};

AsyncCluster::AsyncCluster(EventLoop& loop, std::shared_ptr<Cluster> cluster)
    : loop_(loop), cluster_(std::move(cluster)) {}

void AsyncCluster::eval(const ScriptCall& call, Clock::time_point deadline,
                        std::function<void(Status, Reply)> done) {
    std::make_shared<Journey>(*this, call, deadline, std::move(done))->hop();
}

std::shared_ptr<AsyncConnection> AsyncCluster::to(const NodeAddress& a) {
    auto& c = conns_[a];
    if (!c) {
        Endpoint ep = cluster_->base();
        ep.host = a.host;
        ep.port = a.port;
        c = std::make_shared<AsyncConnection>(loop_, std::move(ep));
    }
    return c;
}

void AsyncCluster::close() noexcept {
    closed_ = true;
    for (auto& [at, c] : conns_) c->close();
}

void AsyncCluster::close_when_idle(std::function<void()> closed) noexcept {
    drained_ = std::move(closed);
    drain_check();
}

void AsyncCluster::drain_check() noexcept {
    if (!drained_ || journeys_ != 0) return;
    auto closed = std::move(drained_);
    drained_ = nullptr;
    close();
    closed();
}

}  // namespace deadbolt::detail
