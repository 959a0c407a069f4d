#include "backends/redis/topology/cluster.hpp"

#include <fmt/format.h>

#include <optional>
#include <set>

#include "backends/redis/keys.hpp"
#include "backends/redis/net/status.hpp"
#include "backends/redis/topology/replication.hpp"
#include "backends/redis/topology/slot_split.hpp"
#include "core/background.hpp"
#include "core/backoff.hpp"

namespace deadbolt::detail {

struct Cluster::Request {
    std::uint16_t slot = 0;
    std::vector<std::string> commands;  // each one encoded command
    std::vector<Reply> replies;         // one per command, once answered
    Status status;                      // why there are no replies
    std::optional<NodeAddress> ask;     // send there once, after ASKING
    std::vector<std::string> fallback;  // sent instead after a TRYAGAIN (ScriptCall's)
    bool done = false;
};

namespace {

// Redirections one request may follow: a slot moves at most a few times during one call.
constexpr unsigned kMaxRounds = 16;

// The reply that sends a request elsewhere or asks it to come back (none: it is final).
const Reply* redirection(const std::vector<Reply>& replies) {
    for (const auto& r : replies)
        if (r.is_error() &&
            (parse_redirect(r.str).kind != Redirect::Kind::none || is_cluster_retry(r.str)))
            return &r;
    return nullptr;
}

std::string encoded(const std::vector<std::string_view>& argv) {
    std::string out;
    encode_command(out, argv);
    return out;
}

}  // namespace

Cluster::Cluster(std::vector<Endpoint> seeds) : base_(seeds.front()), owners_(kSlots) {
    base_.retry_connect = false;  // a dead master sends us to re-read the map instead
    for (const auto& s : seeds) seeds_.push_back({s.host, s.port});
}

Cluster::~Cluster() = default;

void Cluster::stop() noexcept {
    Background t;
    {
        std::lock_guard lk(m_);
        stopping_ = true;
        t = std::move(watcher_);
    }
    cv_.notify_all();
    t.end();  // the client may die inside on_change
}

Cluster::ConnPtr Cluster::connection_locked(const NodeAddress& a) {
    auto& c = conns_[a];
    if (!c) {
        Endpoint ep = base_;
        ep.host = a.host;
        ep.port = a.port;
        c = std::make_shared<Connection>(std::move(ep));
    }
    return c;
}

Cluster::ConnPtr Cluster::owner(std::uint16_t slot) {
    std::lock_guard lk(m_);
    if (owners_[slot].host.empty()) return nullptr;
    return connection_locked(owners_[slot]);
}

void Cluster::moved(std::uint16_t slot, const NodeAddress& to) {
    std::lock_guard lk(m_);
    owners_[slot] = to;
}

NodeAddress Cluster::master_of(std::string_view key) const {
    return owner_of(key_slot(key));
}

NodeAddress Cluster::owner_of(std::uint16_t slot) const {
    std::lock_guard lk(m_);
    return owners_[slot];
}

void Cluster::reread_soon() noexcept {
    {
        std::lock_guard lk(m_);
        reread_ = true;
    }
    cv_.notify_all();
}

std::vector<NodeAddress> Cluster::nodes() const {
    std::lock_guard lk(m_);
    std::vector<NodeAddress> out;
    auto add = [&](const NodeAddress& a) {
        if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
    };
    for (const auto& r : ranges_) add(r.master);
    for (const auto& r : ranges_)
        for (const auto& replica : r.replicas) add(replica);
    return out;
}

std::vector<std::shared_ptr<Connection>> Cluster::primaries() {
    std::lock_guard lk(m_);
    std::vector<std::shared_ptr<Connection>> out;
    std::vector<NodeAddress> seen;
    for (const auto& r : ranges_) {
        if (std::find(seen.begin(), seen.end(), r.master) != seen.end()) continue;
        seen.push_back(r.master);
        out.push_back(connection_locked(r.master));
    }
    return out;
}

Status Cluster::read_map(Connection& c, Clock::time_point deadline) {
    Reply r;
    Status st = detail::command(c, {"CLUSTER", "SLOTS"}, r, deadline);
    if (!st.ok()) {
        if (st.detail.find("cluster support disabled") != std::string::npos)
            return Status::error(errc::invalid_url,
                                 fmt::format("{} is not in cluster mode: use redis:// for a "
                                             "single server",
                                             c.endpoint().describe()));
        return st;
    }
    std::vector<SlotRange> ranges;
    std::string why;
    if (!parse_cluster_slots(r, c.endpoint().host, ranges, &why))
        return Status::error(errc::protocol_error,
                             fmt::format("{}: {}", c.endpoint().describe(), why));
    if (ranges.empty())
        return Status::error(errc::busy,
                             fmt::format("{} serves no slots yet: finish creating the cluster "
                                         "(redis-cli --cluster create)",
                                         c.endpoint().describe()));
    std::vector<NodeAddress> owners(kSlots);
    for (const auto& range : ranges)
        for (unsigned s = range.first; s <= range.last; ++s) owners[s] = range.master;
    std::lock_guard lk(m_);
    bool first = ranges_.empty();
    if (!first && owners != owners_) {
        changed_ = true;
        cv_.notify_all();
    }
    owners_ = std::move(owners);
    ranges_ = std::move(ranges);
    ++epoch_;
    return {};
}

Status Cluster::refresh(Clock::time_point deadline) {
    std::uint64_t seen = 0;
    {
        std::lock_guard lk(m_);
        seen = epoch_;
    }
    std::lock_guard one(refresh_m_);
    std::vector<NodeAddress> candidates;
    {
        std::lock_guard lk(m_);
        if (epoch_ != seen) return {};  // another caller just read it
        for (const auto& r : ranges_)
            if (std::find(candidates.begin(), candidates.end(), r.master) == candidates.end())
                candidates.push_back(r.master);
    }
    for (const auto& s : seeds_)
        if (std::find(candidates.begin(), candidates.end(), s) == candidates.end())
            candidates.push_back(s);
    std::string tried;
    Status last;
    for (const auto& a : candidates) {
        ConnPtr c;
        {
            std::lock_guard lk(m_);
            c = connection_locked(a);
        }
        last = read_map(*c, deadline);
        if (last.ok()) return {};
        if (last.ec == make_error_code(errc::invalid_url)) return last;
        tried += fmt::format("; {}: {}", c->endpoint().describe(), last.detail);
        if (Clock::now() >= deadline) break;
    }
    return Status{last.ec, "no cluster node answered CLUSTER SLOTS" + tried};
}

void Cluster::watch(std::chrono::milliseconds period, std::function<void()> on_change) {
    on_change_ = std::move(on_change);
    watcher_ = Background([self = shared_from_this(), period] { self->watch_loop(period); });
}

void Cluster::watch_loop(std::chrono::milliseconds period) {
    std::unique_lock lk(m_);
    while (!stopping_) {
        cv_.wait_for(lk, period, [&] { return stopping_ || changed_ || reread_; });
        if (stopping_) break;
        if (!changed_) {
            reread_ = false;
            lk.unlock();
            refresh(Clock::now() + base_.options.connect_timeout + base_.options.command_timeout);
            lk.lock();
        }
        if (changed_) {
            changed_ = false;
            lk.unlock();
            on_change_();
            lk.lock();
        }
    }
}

void Cluster::route(std::vector<Request>& requests, Clock::time_point deadline) {
    struct Group {
        ConnPtr conn;
        std::vector<Request*> members;
        std::string bytes;
        std::size_t count = 0;
        Connection::Pending pending;
        Status status;
        std::vector<Reply> replies;
    };
    for (unsigned round = 0;; ++round) {
        std::vector<Group> groups;
        bool reread = false, pause = false;
        for (auto& r : requests) {
            if (r.done) continue;
            ConnPtr c;
            if (r.ask) {
                std::lock_guard lk(m_);
                c = connection_locked(*r.ask);
            } else {
                c = owner(r.slot);
            }
            if (!c) {
                r.status = Status::error(errc::busy,
                                         fmt::format("no master serves slot {}: the cluster is "
                                                     "failing over or not fully set up",
                                                     r.slot));
                reread = pause = true;
                continue;
            }
            auto g = std::find_if(groups.begin(), groups.end(),
                                  [&](const Group& x) { return x.conn == c; });
            if (g == groups.end()) {
                g = groups.insert(groups.end(), Group{});
                g->conn = c;
            }
            g->members.push_back(&r);
            for (const auto& cmd : r.commands) {
                if (r.ask) g->bytes += encoded({"ASKING"});
                g->bytes += cmd;
                g->count += r.ask ? 2 : 1;
            }
        }
        // Every master's share goes out before any reply is awaited: one round trip for all.
        if (groups.size() == 1) {
            auto& g = groups.front();
            g.status = g.conn->exec(std::move(g.bytes), g.count, g.replies, deadline);
        } else {
            for (auto& g : groups) g.pending = g.conn->submit(std::move(g.bytes), g.count);
            for (auto& g : groups) g.status = g.conn->wait(g.pending, g.replies, deadline);
        }
        for (auto& g : groups) {
            for (Request* r : g.members) {
                bool asked = r->ask.has_value();
                r->ask.reset();
                if (!g.status.ok()) {
                    r->status = g.status;
                    r->replies.clear();
                    if (nothing_sent(g.status)) {
                        reread = pause = true;  // a failover may have moved its slots
                    } else {
                        r->done = true;
                    }
                    continue;
                }
                r->status = {};
                r->replies.clear();
                std::size_t k = 0;
                for (std::size_t i = 0; i < r->commands.size(); ++i) {
                    if (asked) ++k;  // ASKING's +OK
                    r->replies.push_back(std::move(g.replies[k++]));
                }
                g.replies.erase(g.replies.begin(), g.replies.begin() + static_cast<long>(k));
                const Reply* why = redirection(r->replies);
                if (!why) {
                    r->done = true;
                    continue;
                }
                Redirect to = parse_redirect(why->str);
                if (to.to.host.empty()) to.to.host = g.conn->endpoint().host;
                if (to.kind == Redirect::Kind::moved) {
                    moved(to.slot, to.to);
                    reread = true;  // a slot moved: others may have moved with it
                } else if (to.kind == Redirect::Kind::ask) {
                    r->ask = to.to;
                } else if (why->str.starts_with("TRYAGAIN") && !r->fallback.empty()) {
                    r->commands = std::move(r->fallback);  // nothing ran: at once, without
                    r->fallback.clear();                   // the key the move lacks
                    if (asked)
                        r->ask = NodeAddress{g.conn->endpoint().host, g.conn->endpoint().port};
                } else {
                    pause = true;  // TRYAGAIN, CLUSTERDOWN: nothing ran; soon again
                }
            }
        }
        bool left = std::any_of(requests.begin(), requests.end(), [](auto& r) { return !r.done; });
        if (!left) return;
        if (round + 1 >= kMaxRounds || Clock::now() >= deadline) {
            for (auto& r : requests) r.done = true;  // the last answer or failure stands
            return;
        }
        if (reread) (void)refresh(deadline);
        if (pause) {
            auto left_time = deadline - Clock::now();
            auto nap = jittered_backoff(round, std::chrono::milliseconds(10),
                                        std::chrono::milliseconds(200));
            if (left_time > Clock::duration::zero())
                std::this_thread::sleep_for(std::min<Clock::duration>(nap, left_time));
        }
    }
}

Status Cluster::eval_many(std::span<const ScriptCall> calls, std::vector<Reply>& replies,
                          Clock::time_point deadline) {
    // A MultiLock's lease operation over several slots runs as one part per slot.
    if (auto parts = split_by_slot(calls); parts.split) {
        std::vector<Reply> part_replies;
        if (Status st = eval_many(parts.calls, part_replies, deadline); !st.ok()) return st;
        replies = merge_parts(parts, std::move(part_replies), calls.size());
        return {};
    }
    replies.assign(calls.size(), Reply{});
    std::vector<Request> requests(calls.size());
    std::vector<bool> cross(calls.size(), false);
    for (std::size_t i = 0; i < calls.size(); ++i) {
        const auto& call = calls[i];
        auto& r = requests[i];
        r.slot = call.keys.empty() ? 0 : key_slot(call.keys.front());
        cross[i] = spans_slots(call.keys);
        if (cross[i]) {
            r.done = true;
            r.replies.resize(1);
            r.replies[0].type = Reply::Type::error;
            r.replies[0].str = fmt::format(
                "DEADBOLT-USAGE keys '{}' and others of one request are in different cluster "
                "slots; give the names one {{hash tag}} so they share a slot",
                call.keys.front());
            continue;
        }
        r.commands.emplace_back();
        encode_evalsha(r.commands.back(), *call.script, call.keys, call.args);
        if (!call.fallback_keys.empty())
            encode_eval(r.fallback.emplace_back(), *call.script, call.fallback_keys, call.args);
    }
    route(requests, deadline);
    // NOSCRIPT (a node restarted, or one we never used): once more with EVAL, which caches it.
    std::vector<Request> again;
    std::vector<std::size_t> which;
    for (std::size_t i = 0; i < calls.size(); ++i) {
        auto& r = requests[i];
        if (!r.status.ok() || cross[i] || !r.replies[0].is_error() ||
            !r.replies[0].str.starts_with("NOSCRIPT"))
            continue;
        which.push_back(i);
        auto& a = again.emplace_back();
        a.slot = r.slot;
        a.commands.emplace_back();
        encode_eval(a.commands.back(), *calls[i].script, calls[i].keys, calls[i].args);
        if (!calls[i].fallback_keys.empty())
            encode_eval(a.fallback.emplace_back(), *calls[i].script, calls[i].fallback_keys,
                        calls[i].args);
    }
    if (!again.empty()) route(again, deadline);
    for (std::size_t k = 0; k < which.size(); ++k) requests[which[k]] = std::move(again[k]);
    std::size_t answered = 0;
    Status failed;
    for (std::size_t i = 0; i < calls.size(); ++i) {
        auto& r = requests[i];
        if (r.status.ok()) {
            replies[i] = std::move(r.replies.front());
            ++answered;
            continue;
        }
        if (failed.ok()) failed = r.status;
        replies[i].type = Reply::Type::error;
        replies[i].str = r.status.detail;
    }
    if (answered == 0 && !calls.empty()) return failed;
    return {};
}

Status Cluster::pipeline(std::string_view key,
                         const std::vector<std::vector<std::string_view>>& cmds,
                         std::vector<Reply>& replies, Clock::time_point deadline) {
    std::vector<Request> one(1);
    one[0].slot = key_slot(key);
    for (const auto& argv : cmds) one[0].commands.push_back(encoded(argv));
    route(one, deadline);
    if (!one[0].status.ok()) return one[0].status;
    replies = std::move(one[0].replies);
    for (const auto& r : replies)
        if (r.is_error()) return from_server_error(r.str);
    return {};
}

Status Cluster::confirm_replicated(std::span<const ScriptCall> calls, Clock::time_point deadline) {
    if (base_.redis.sync_replicas <= 0) return {};
    std::set<std::uint16_t> slots;
    for (const auto& c : calls)
        for (auto k : c.keys) slots.insert(key_slot(k));
    std::set<ConnPtr> masters;
    for (auto s : slots)
        if (auto c = owner(s)) masters.insert(c);
    for (const auto& c : masters)
        if (Status st = detail::confirm_replicated(*c, deadline); !st.ok()) return st;
    return {};
}

Status Cluster::ping(Clock::time_point deadline) {
    if (Status st = refresh(deadline); !st.ok()) return st;
    std::vector<ConnPtr> masters;
    {
        std::lock_guard lk(m_);
        for (const auto& r : ranges_) {
            auto c = connection_locked(r.master);
            if (std::find(masters.begin(), masters.end(), c) == masters.end()) masters.push_back(c);
        }
    }
    for (const auto& c : masters) {
        Reply r;
        if (Status st = detail::command(*c, {"PING"}, r, deadline); !st.ok())
            return Status{
                st.ec, fmt::format("cluster master {}: {}", c->endpoint().describe(), st.detail)};
    }
    return {};
}

}  // namespace deadbolt::detail
