#include "backends/redis/topology/nodes.hpp"

#include <fmt/format.h>

#include "backends/redis/net/closing.hpp"
#include "core/quorum.hpp"

namespace deadbolt::detail {

Nodes::Nodes(std::shared_ptr<Server> one) : one_(std::move(one)) {}

Nodes::Nodes(const std::vector<Endpoint>& redlock, bool fencing, LoopOf loop)
    : redlock_(true), fencing_(fencing), loop_(std::move(loop)) {
    for (auto ep : redlock) {
        ep.retry_connect = false;
        conns_.push_back(std::make_shared<Connection>(std::move(ep)));
    }
}

std::uint64_t Nodes::proposal() const {
    const auto now = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::system_clock::now().time_since_epoch());
    return std::max(static_cast<std::uint64_t>(now.count()),
                    agreed_.load(std::memory_order_relaxed) + 1);
}

void Nodes::agreed(std::uint64_t fence) {
    std::uint64_t seen = agreed_.load(std::memory_order_relaxed);
    while (seen < fence && !agreed_.compare_exchange_weak(seen, fence, std::memory_order_relaxed)) {
    }
}

void Nodes::stop() noexcept {
    // A round returns once a majority decided: what it sent to the other nodes (a release) is
    // still on its way, and goes out before the client closes, within its deadline. async_ is
    // complete once async_used_ is set, and never changed after.
    if (async_used_) close_all(loop(), async_);
}

std::vector<std::shared_ptr<AsyncConnection>> Nodes::on_loop(
    const std::vector<std::size_t>& which) {
    if (async_.empty()) {
        for (const auto& c : conns_)
            async_.push_back(std::make_shared<AsyncConnection>(loop(), c->endpoint()));
        async_used_ = true;
    }
    if (which.empty()) return async_;
    std::vector<std::shared_ptr<AsyncConnection>> out;
    out.reserve(which.size());
    for (auto i : which) out.push_back(async_[i]);
    return out;
}

void Nodes::start(const Send& send, const std::vector<std::size_t>& which, Decided decided,
                  RoundDone done) {
    start_round(on_loop(which), send, std::move(decided), std::move(done));
}

std::vector<NodeReplies> Nodes::blocking(const Send& send, const std::vector<std::size_t>& which) {
    return loop().wait<std::vector<NodeReplies>>(
        [this, &send, &which](RoundDone done) { start(send, which, nullptr, std::move(done)); });
}

namespace {

Send eval_send(AsyncConnection::Calls calls, Clock::time_point deadline) {
    std::vector<ScriptCall> views;
    for (const auto& c : *calls) views.push_back(c.view());
    return [calls = std::move(calls), bytes = encode_calls(views), deadline](
               AsyncConnection& c, AsyncConnection::Done done) {
        c.eval_many(calls, bytes, deadline, std::move(done));
    };
}

AsyncConnection::Calls owned_all(std::span<const ScriptCall> calls) {
    auto out = std::make_shared<std::vector<OwnedCall>>();
    for (const auto& c : calls) out->push_back(owned(c));
    return out;
}

}  // namespace

void Nodes::async_everywhere(AsyncConnection::Calls calls, Clock::time_point deadline,
                             const std::vector<std::size_t>& which, Decided decided,
                             RoundDone done) {
    start(eval_send(std::move(calls), deadline), which, std::move(decided), std::move(done));
}

std::vector<NodeReplies> Nodes::everywhere(std::span<const ScriptCall> calls,
                                           Clock::time_point deadline,
                                           const std::vector<std::size_t>& which) {
    return blocking(eval_send(owned_all(calls), deadline), which);
}

std::vector<NodeReplies> Nodes::command_everywhere(const std::vector<std::string_view>& argv) {
    std::string bytes;
    encode_command(bytes, argv);
    const auto& o = conns_.front()->endpoint().options;
    auto deadline = Clock::now() + o.connect_timeout + o.command_timeout;
    return blocking(
        [&bytes, deadline](AsyncConnection& c, AsyncConnection::Done done) {
            c.exec(bytes, 1, deadline, std::move(done));
        },
        {});
}

std::string Nodes::describe_failures(const std::vector<NodeReplies>& results, std::size_t answered,
                                     const std::vector<std::size_t>& which) const {
    std::string out = fmt::format("{} of {} Redlock nodes answered in time ({} needed)", answered,
                                  size(), majority(static_cast<int>(size())));
    for (std::size_t i = 0; i < results.size(); ++i) {
        if (results[i].status.ok()) continue;
        auto& c = *conns_[which.empty() ? i : which[i]];
        out += fmt::format("; {}: {}", c.endpoint().describe(), results[i].status.detail);
    }
    return out;
}

Status Nodes::need_majority(const std::vector<NodeReplies>& results,
                            std::string_view advice) const {
    std::size_t answered = 0;
    for (const auto& r : results) answered += r.status.ok() ? 1 : 0;
    if (answered >= static_cast<std::size_t>(majority(static_cast<int>(size())))) return {};
    return Status::error(errc::no_quorum,
                         describe_failures(results, answered) + std::string(advice));
}

namespace {

// The nodes' answers to call c of a pipeline: how many said yes (n >= 1), and no (0).
struct Votes {
    int yes = 0;
    int no = 0;
    long long best = 0;  // the largest yes
};

Votes votes_on(const std::vector<NodeReplies>& results, std::size_t c) {
    Votes v;
    for (const auto& r : results) {
        if (!r.arrived || !r.status.ok() || r.replies[c].type != Reply::Type::integer) continue;
        long long x = r.replies[c].integer;
        if (x >= 1) {
            ++v.yes;
            v.best = std::max(v.best, x);
        } else {
            ++v.no;
        }
    }
    return v;
}

}  // namespace

void Nodes::async_eval_many(AsyncConnection::Calls calls, Clock::time_point deadline,
                            AsyncConnection::Done done) {
    const std::size_t k = calls->size();
    const int n = static_cast<int>(size());
    // Decided once every call is: a majority's yes or no is final, whatever the rest say.
    auto decided = [k, n](const std::vector<NodeReplies>& results) {
        for (std::size_t c = 0; c < k; ++c) {
            Votes v = votes_on(results, c);
            if (tally(v.yes, v.no, n) == Tally::undecided) return false;
        }
        return true;
    };
    async_everywhere(
        std::move(calls), deadline, {}, decided,
        [this, k, n, done = std::move(done)](const std::vector<NodeReplies>& results) {
            std::size_t answered = 0;
            for (const auto& r : results) answered += r.status.ok() ? 1 : 0;
            if (answered == 0)
                return done(Status::error(errc::no_quorum, describe_failures(results, answered)),
                            {});
            std::vector<Reply> replies(k);
            for (std::size_t c = 0; c < k; ++c) {
                Votes v = votes_on(results, c);
                Reply& out = replies[c];
                switch (tally(v.yes, v.no, n)) {
                    case Tally::yes:
                        out.type = Reply::Type::integer;
                        out.integer = v.best;
                        break;
                    case Tally::no:
                        out.type = Reply::Type::integer;
                        out.integer = 0;
                        break;
                    case Tally::undecided:
                        out.type = Reply::Type::error;
                        out.str = fmt::format("NOQUORUM {} said yes and {} no; {}", v.yes, v.no,
                                              describe_failures(results, answered));
                        break;
                }
            }
            done({}, std::move(replies));
        });
}

Status Nodes::eval_many(std::span<const ScriptCall> calls, std::vector<Reply>& replies,
                        Clock::time_point deadline) {
    if (!redlock_) return one_->eval_many(calls, replies, deadline);
    auto [st, r] = loop().wait<std::pair<Status, std::vector<Reply>>>([this, all = owned_all(calls),
                                                                       deadline](auto done) {
        async_eval_many(all, deadline, [done = std::move(done)](Status s, std::vector<Reply> x) {
            done({std::move(s), std::move(x)});
        });
    });
    replies = std::move(r);
    return st;
}

Status Nodes::eval(const ScriptCall& call, Reply& reply, Clock::time_point deadline) {
    if (!redlock_) return one_->eval(call, reply, deadline);
    std::vector<Reply> replies;
    if (Status st = eval_many({&call, 1}, replies, deadline); !st.ok()) return st;
    reply = std::move(replies.front());
    if (reply.is_error()) return Status::error(errc::no_quorum, reply.str.substr(9));
    return {};
}

Status Nodes::confirm_replicated(std::span<const ScriptCall> calls, Clock::time_point deadline) {
    return redlock_ ? Status{} : one_->confirm_replicated(calls, deadline);
}

}  // namespace deadbolt::detail
