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

bool OneServer::try_take(Lane& l) {
    int idle = 0;
    if (!l.users.compare_exchange_strong(idle, 1, std::memory_order_acquire)) return false;
    // A call that gave up may have left its request in flight there.
    if (!l.conn->busy()) return true;
    l.users.fetch_sub(1, std::memory_order_release);
    return false;
}

OneServer::Claim OneServer::lane() {
    if (max_lanes_ > 1) {
        if (try_take(first_)) return Claim(first_);
        std::lock_guard lk(m_);
        for (auto& l : more_)
            if (try_take(*l)) return Claim(*l);
        if (more_.size() + 1 < max_lanes_) {
            auto& l = more_.emplace_back(std::make_unique<Lane>(std::make_shared<Connection>(ep_)));
            if (moved_) l->conn->retarget(moved_->first, moved_->second);
            l->users.store(1, std::memory_order_relaxed);
            return Claim(*l);
        }
    }
    first_.users.fetch_add(1, std::memory_order_acquire);
    return Claim(first_);
}

void OneServer::retarget(const std::string& host, std::uint16_t port) {
    first_.conn->retarget(host, port);
    std::lock_guard lk(m_);
    moved_.emplace(host, port);
    for (auto& l : more_) l->conn->retarget(host, port);
}

Status OneServer::eval_many(std::span<const ScriptCall> calls, std::vector<Reply>& replies,
                            Clock::time_point deadline) {
    const Claim c = lane();
    return detail::eval_many(c.conn(), calls, replies, deadline);
}

Status OneServer::pipeline(std::string_view /*key*/,
                           const std::vector<std::vector<std::string_view>>& cmds,
                           std::vector<Reply>& replies, Clock::time_point deadline) {
    const Claim c = lane();
    return detail::pipeline(c.conn(), cmds, replies, deadline);
}

Status OneServer::confirm_replicated(std::span<const ScriptCall> /*calls*/,
                                     Clock::time_point deadline) {
    return detail::confirm_replicated(*first_.conn, deadline);
}

Status OneServer::ping(Clock::time_point deadline) {
    Reply r;
    return detail::command(*first_.conn, {"PING"}, r, deadline);
}

}  // namespace deadbolt::detail
