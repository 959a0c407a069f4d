#include "backends/redis/topology/nodes.hpp"

#include <fmt/format.h>

#include "core/quorum.hpp"

namespace deadbolt::detail {

Nodes::Nodes(std::shared_ptr<Server> one) : one_(std::move(one)) {}

Nodes::Nodes(const std::vector<Endpoint>& redlock, bool fencing)
    : redlock_(true), fencing_(fencing) {
    for (auto ep : redlock) {
        ep.retry_connect = false;
        conns_.push_back(std::make_shared<Connection>(std::move(ep)));
    }
}

std::vector<NodeReplies> Nodes::everywhere(std::span<const ScriptCall> calls,
                                           Clock::time_point deadline,
                                           const std::vector<std::size_t>& which) {
    std::size_t n = which.empty() ? conns_.size() : which.size();
    std::vector<NodeReplies> out(n);
    auto at = [&](std::size_t i) -> Connection& { return node(which.empty() ? i : which[i]); };
    // Nodes with an open session: this thread writes to each, then collects each reply (one
    // round trip for all, no thread hop). A node that must connect first (a blackholed host
    // can take its whole timeout) goes to a pool thread, so it delays no one.
    std::vector<std::size_t> ready, connecting;
    for (std::size_t i = 0; i < n; ++i) (at(i).connected_now() ? ready : connecting).push_back(i);
    auto fail = [&](std::size_t i, const std::exception& ex) {  // out of memory: a lost vote
        out[i].status = Status::error(errc::server_error, ex.what());
    };
    fanout_.run(connecting.size() + 1, [&](std::size_t k) {
        if (k > 0) {
            std::size_t i = connecting[k - 1];
            try {
                out[i].status = detail::eval_many(at(i), calls, out[i].replies, deadline);
            } catch (const std::exception& ex) {
                fail(i, ex);
            }
            return;
        }
        std::vector<Connection::Pending> pending(ready.size());
        for (std::size_t j = 0; j < ready.size(); ++j) {
            try {
                pending[j] = send_many(at(ready[j]), calls);
            } catch (const std::exception& ex) {
                fail(ready[j], ex);
            }
        }
        for (std::size_t j = 0; j < ready.size(); ++j) {
            if (!pending[j]) continue;
            auto i = ready[j];
            try {
                out[i].status = finish_many(at(i), pending[j], calls, out[i].replies, deadline);
            } catch (const std::exception& ex) {
                fail(i, ex);
            }
        }
    });
    return out;
}

std::vector<NodeReplies> Nodes::command_everywhere(const std::vector<std::string_view>& argv) {
    std::vector<NodeReplies> out(size());
    fanout_.run(size(), [&](std::size_t i) {
        auto& r = out[i];
        auto& c = node(i);
        auto deadline = Clock::now() + c.endpoint().options.connect_timeout +
                        c.endpoint().options.command_timeout;
        try {
            r.replies.resize(1);
            r.status = command(c, argv, r.replies.front(), deadline);
        } catch (const std::exception& ex) {
            r.status = Status::error(errc::server_error, ex.what());
        }
    });
    return out;
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

Status Nodes::eval_many(std::span<const ScriptCall> calls, std::vector<Reply>& replies,
                        Clock::time_point deadline) {
    if (!redlock_) return one_->eval_many(calls, replies, deadline);
    auto results = everywhere(calls, deadline);
    std::size_t answered = 0;
    for (const auto& r : results) answered += r.status.ok() ? 1 : 0;
    if (answered == 0) return Status::error(errc::no_quorum, describe_failures(results, answered));
    int n = static_cast<int>(size());
    replies.assign(calls.size(), Reply{});
    for (std::size_t c = 0; c < calls.size(); ++c) {
        int yes = 0, no = 0;
        long long best = 0;
        for (const auto& r : results) {
            if (!r.status.ok() || r.replies[c].type != Reply::Type::integer) continue;
            long long v = r.replies[c].integer;
            if (v >= 1) {
                ++yes;
                best = std::max(best, v);
            } else {
                ++no;
            }
        }
        Reply& out = replies[c];
        switch (tally(yes, no, n)) {
            case Tally::yes:
                out.type = Reply::Type::integer;
                out.integer = best;
                break;
            case Tally::no:
                out.type = Reply::Type::integer;
                out.integer = 0;
                break;
            case Tally::undecided:
                out.type = Reply::Type::error;
                out.str = fmt::format("NOQUORUM {} said yes and {} no; {}", yes, no,
                                      describe_failures(results, answered));
                break;
        }
    }
    return {};
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
