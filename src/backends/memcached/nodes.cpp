#include "backends/memcached/nodes.hpp"

#include <fmt/format.h>

#include <array>
#include <span>
#include <utility>

namespace deadbolt::detail {
namespace {
// Idle connections kept per server: enough for the threads that use it at once.
constexpr std::size_t kIdleKept = 16;
}  // namespace

McNodes::McNodes(std::vector<HostPort> servers, std::chrono::milliseconds connect_timeout)
    : connect_timeout_(connect_timeout) {
    for (auto& hp : servers) {
        auto s = std::make_unique<Server>();
        s->at = std::move(hp);
        servers_.push_back(std::move(s));
    }
}

void clear_requests(std::vector<McRequest>& requests, std::size_t n) {
    requests.resize(n);
    for (auto& r : requests) {
        r.text.clear();
        r.replies = 0;
        r.errors_are_replies = false;
    }
}

Status McNodes::borrow(Server& s, Clock::time_point by, std::unique_ptr<McConn>& out) {
    {
        std::lock_guard lock(s.m);
        if (!s.idle.empty()) {
            out = std::move(s.idle.back());
            s.idle.pop_back();
            return {};
        }
    }
    return McConn::open(s.at, std::min(by, Clock::now() + connect_timeout_), out);
}

void McNodes::give_back(Server& s, std::unique_ptr<McConn> c) {
    if (!c) return;
    if (c->broken()) {
        auto now = Clock::now().time_since_epoch().count();
        auto last = last_break_.load();
        if (c->hung_up() && on_break &&
            now - last >=
                std::chrono::duration_cast<Clock::duration>(std::chrono::seconds(1)).count() &&
            last_break_.compare_exchange_strong(last, now))
            on_break();
        return;
    }
    std::lock_guard lock(s.m);
    if (s.idle.size() < kIdleKept) s.idle.push_back(std::move(c));
}

std::vector<McAnswer> McNodes::round(const std::vector<McRequest>& requests, Clock::time_point by) {
    std::vector<McAnswer> out;
    round(requests, by, out);
    return out;
}

void McNodes::round(const std::vector<McRequest>& requests, Clock::time_point by,
                    std::vector<McAnswer>& out) {
    out.resize(servers_.size());
    // The replies are written over, or cleared when none are read. A status is set only
    // where it is an error: moving an empty one in was a twentieth of a round.
    for (auto& a : out) {
        if (!a.status.ok()) a.status = {};
        a.asked = false;
    }
    // The connections borrowed for the round: in place for the usual few servers.
    constexpr std::size_t kFew = 8;
    std::array<std::unique_ptr<McConn>, kFew> few;
    std::vector<std::unique_ptr<McConn>> many;
    if (servers_.size() > kFew) many.resize(servers_.size());
    std::span<std::unique_ptr<McConn>> conns =
        many.empty() ? std::span(few.data(), servers_.size()) : std::span(many);
    for (std::size_t i = 0; i < servers_.size() && i < requests.size(); ++i) {
        if (requests[i].text.empty()) continue;
        out[i].asked = true;
        if (Status st = borrow(*servers_[i], by, conns[i]); !st.ok()) {
            out[i].status = std::move(st);
            continue;
        }
        if (Status st = conns[i]->send(requests[i].text, by); !st.ok())
            out[i].status = std::move(st);
    }
    for (std::size_t i = 0; i < conns.size(); ++i) {
        if (!conns[i] || !out[i].status.ok()) {
            out[i].replies.clear();
            if (conns[i]) give_back(*servers_[i], std::move(conns[i]));
            continue;
        }
        if (Status st = conns[i]->receive(requests[i].replies, by, out[i].replies); !st.ok())
            out[i].status = std::move(st);
        give_back(*servers_[i], std::move(conns[i]));
        if (!out[i].status.ok() || requests[i].errors_are_replies) continue;
        for (const auto& r : out[i].replies)
            if (r.error()) {
                out[i].status = Status::error(
                    errc::server_error, fmt::format("memcached at {} refused a request: {} {}",
                                                    servers_[i]->at.describe(), r.code, r.value));
                break;
            }
    }
}

McAnswer McNodes::one(std::size_t i, const McRequest& request, Clock::time_point by) {
    std::vector<McRequest> rs(servers_.size());
    rs[i] = request;
    return std::move(round(rs, by)[i]);
}

Status McNodes::stats(std::size_t i, std::string_view what, Clock::time_point by,
                      std::vector<std::pair<std::string, std::string>>& out) {
    std::unique_ptr<McConn> c;
    if (Status st = borrow(*servers_[i], by, c); !st.ok()) return st;
    Status st = c->stats(what, by, out);
    give_back(*servers_[i], std::move(c));
    return st;
}

Status McNodes::lines(std::size_t i, std::string_view request, Clock::time_point by,
                      std::vector<std::string>& out) {
    std::unique_ptr<McConn> c;
    if (Status st = borrow(*servers_[i], by, c); !st.ok()) return st;
    Status st = c->lines(request, by, out);
    give_back(*servers_[i], std::move(c));
    return st;
}

}  // namespace deadbolt::detail
