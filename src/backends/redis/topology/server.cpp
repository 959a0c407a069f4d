#include "backends/redis/topology/server.hpp"

#include "backends/redis/topology/replication.hpp"

namespace deadbolt::detail {

Status Server::eval(const ScriptCall& call, Reply& reply, Clock::time_point deadline) {
    std::vector<Reply> replies;
    if (Status st = eval_many({&call, 1}, replies, deadline); !st.ok()) return st;
    reply = std::move(replies.front());
    if (reply.is_error()) return from_server_error(reply.str);
    return {};
}

Status Server::command(std::string_view key, const std::vector<std::string_view>& argv,
                       Reply& reply, Clock::time_point deadline) {
    std::vector<Reply> replies;
    if (Status st = pipeline(key, {argv}, replies, deadline); !st.ok()) return st;
    reply = std::move(replies.front());
    return {};
}

Connection& OneServer::lane() {
    if (max_lanes_ == 1 || !conn_->busy()) return *conn_;
    std::lock_guard lk(m_);
    for (auto& c : more_)
        if (!c->busy()) return *c;
    if (more_.size() + 1 < max_lanes_) {
        auto& c = more_.emplace_back(std::make_shared<Connection>(ep_));
        if (moved_) c->retarget(moved_->first, moved_->second);
        return *c;
    }
    return *conn_;
}

void OneServer::retarget(const std::string& host, std::uint16_t port) {
    conn_->retarget(host, port);
    std::lock_guard lk(m_);
    moved_.emplace(host, port);
    for (auto& c : more_) c->retarget(host, port);
}

Status OneServer::eval_many(std::span<const ScriptCall> calls, std::vector<Reply>& replies,
                            Clock::time_point deadline) {
    return detail::eval_many(lane(), calls, replies, deadline);
}

Status OneServer::pipeline(std::string_view /*key*/,
                           const std::vector<std::vector<std::string_view>>& cmds,
                           std::vector<Reply>& replies, Clock::time_point deadline) {
    return detail::pipeline(lane(), cmds, replies, deadline);
}

Status OneServer::confirm_replicated(std::span<const ScriptCall> /*calls*/,
                                     Clock::time_point deadline) {
    return detail::confirm_replicated(*conn_, deadline);
}

Status OneServer::ping(Clock::time_point deadline) {
    Reply r;
    return detail::command(*conn_, {"PING"}, r, deadline);
}

}  // namespace deadbolt::detail
