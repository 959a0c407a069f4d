// What a client sees of locks on Redis without holding them: each name's status (one script
// per name, the majority's view on Redlock) and the names under a pattern (SCAN, never KEYS).
#include <fmt/format.h>

#include <set>

#include "backends/redis/commands.hpp"
#include "backends/redis/keys.hpp"
#include "backends/redis/net/status.hpp"
#include "backends/redis/replies.hpp"
#include "backends/redis/scripts.hpp"
#include "backends/redis/specs.hpp"
#include "backends/redis/store.hpp"
#include "core/quorum.hpp"
#include "core/token.hpp"
#include "core/validity.hpp"

namespace deadbolt::detail {
namespace {

using SysClock = std::chrono::system_clock;

// Fences are their grant's server time in microseconds (next_fence); anything before 2001 is
// an old counter, not a time.
constexpr std::uint64_t kFirstTimeFence = 1'000'000'000'000'000;

std::optional<SysClock::time_point> grant_time(const Reply& fence) {
    std::uint64_t us = 0;
    if (fence.is_nil() || fence.str.empty() || !to_u64(fence, us) || us < kFirstTimeFence)
        return std::nullopt;
    return SysClock::time_point(
        std::chrono::duration_cast<SysClock::duration>(std::chrono::microseconds(us)));
}

// One holder from the status script's (token, fence, ms) triple. A fence says when the holder
// was granted only when the token is deadbolt's: a redis-py holder never wrote one.
Holder parse_holder(const Reply& token, const Reply& fence, const Reply& ms) {
    Holder h;
    h.ttl = std::chrono::milliseconds(ms.integer);
    if (auto origin = token_origin(token.str)) {
        h.host = std::move(origin->host);
        h.pid = origin->pid;
        h.since = grant_time(fence);
    } else {
        h.client = "redis-py Lock, node-redlock, redsync or another client";
    }
    return h;
}

LockStatus parse_status(const Reply& r) {
    if (r.type != Reply::Type::array || r.elements.size() != 9 ||
        r.elements[7].elements.size() % 3 != 0)
        throw ServerError(make_error_code(errc::protocol_error), "unexpected status reply");
    const auto& e = r.elements;
    LockStatus s;
    s.kind = e[0].str;
    s.held = s.kind != "free";
    s.ttl = std::chrono::milliseconds(s.held ? e[1].integer : 0);
    if (!e[2].is_nil() && !to_u64(e[2], s.last_fence)) s.last_fence = 0;
    s.holders = static_cast<int>(e[3].integer);
    s.waiters = static_cast<int>(e[4].integer);
    s.permits = static_cast<int>(e[5].integer);
    s.writer_waiting = e[6].integer == 1;
    const auto& who = e[7].elements;
    for (std::size_t i = 0; i < who.size(); i += 3)
        s.held_by.push_back(parse_holder(who[i], who[i + 1], who[i + 2]));
    if (!e[8].is_nil()) s.value = e[8].str;
    return s;
}

// Appends the keys matching `match` on c to out (SCAN, never KEYS: the server stays
// responsive however many keys it has).
Status scan(Connection& c, const std::string& match, std::set<std::string>& out,
            std::chrono::milliseconds timeout) {
    std::string cursor = "0";
    do {
        Reply r;
        auto st = command(c, {"SCAN", cursor, "MATCH", match, "COUNT", "1000"}, r,
                          Clock::now() + timeout);
        if (!st.ok()) return st;
        if (r.type != Reply::Type::array || r.elements.size() != 2)
            return Status::error(errc::protocol_error, "unexpected SCAN reply");
        cursor = r.elements[0].str;
        for (const auto& key : r.elements[1].elements) out.insert(key.str);
    } while (cursor != "0");
    return {};
}

}  // namespace

Status RedisStore::statuses(const std::vector<std::string>& names,
                            std::vector<std::pair<LockStatus, Status>>& out) {
    static const std::string most = std::to_string(kMaxListedHolders);
    std::vector<std::vector<std::string>> keys;
    std::vector<ScriptCall> calls;
    keys.reserve(names.size());
    for (const auto& name : names) {
        keys.push_back(every_key_of(client.options.key_prefix, name));
        calls.push_back({&status_script(), {keys.back().begin(), keys.back().end()}, {most}});
    }
    out.assign(names.size(), {});
    auto one = [&](const Reply& r, std::pair<LockStatus, Status>& to) {
        if (r.is_error())
            to.second = from_server_error(r.str);
        else
            to.first = parse_status(r);
    };
    if (!nodes->redlock()) {
        std::vector<Reply> replies;
        if (Status st = server->eval_many(calls, replies, deadline()); !st.ok()) return st;
        for (std::size_t i = 0; i < calls.size(); ++i) one(replies[i], out[i]);
        return {};
    }
    auto results = nodes->everywhere(calls, deadline());
    if (Status st = nodes->need_majority(results, ""); !st.ok()) return st;
    for (std::size_t i = 0; i < calls.size(); ++i) {
        std::vector<LockStatus> per_node;
        for (const auto& r : results) {
            if (!r.status.ok()) continue;
            std::pair<LockStatus, Status> node;
            one(r.replies[i], node);
            if (!node.second.ok()) out[i].second = node.second;
            per_node.push_back(std::move(node.first));
        }
        if (out[i].second.ok())
            out[i].first = majority_status(per_node, static_cast<int>(nodes->size()));
    }
    return {};
}

Status RedisStore::lock_names(std::string_view pattern, std::vector<std::string>& names) {
    const std::string& prefix = client.options.key_prefix;
    std::string match = glob_escape(prefix) + std::string(pattern);
    std::vector<std::shared_ptr<Connection>> primaries;
    std::vector<Connection*> targets;
    if (nodes->redlock()) {
        for (std::size_t i = 0; i < nodes->size(); ++i) targets.push_back(&nodes->node(i));
    } else {
        primaries = server->primaries();
        for (const auto& p : primaries) targets.push_back(p.get());
    }
    std::set<std::string> keys;
    std::size_t answered = 0;
    Status failed;
    for (auto* node : targets) {
        if (auto st = scan(*node, match, keys, client.options.command_timeout); !st.ok())
            failed = st;
        else
            ++answered;
    }
    // Redlock: a lock is held only where a majority holds it, so a majority's keys suffice.
    bool enough =
        nodes->redlock()
            ? answered >= static_cast<std::size_t>(majority(static_cast<int>(nodes->size())))
            : failed.ok();
    if (!enough) {
        if (failed.ec == make_error_code(errc::permission_denied))
            failed.detail += " (deadbolt list needs SCAN: grant +scan, or list as another user)";
        return failed;
    }
    for (const auto& key : keys) {
        std::string name = key.substr(prefix.size());
        if (!is_aux_key(key) && validate_name(name).ok()) names.push_back(std::move(name));
    }
    return {};
}

Status RedisStore::force_unlock(const std::string& name, std::string& kind) {
    if (nodes->redlock()) return refusal("force_unlock");
    auto keys = every_key_of(client.options.key_prefix, name);
    std::string released = aux_key(keys.front(), "released");
    std::string observe = observe_channel(client.options.key_prefix, name);
    Reply r;
    Status st = server->eval(
        {&force_unlock_script(), {keys.begin(), keys.end()}, {released, observe, notices_, name}},
        r, deadline());
    kind = r.str == "lock" ? "mutex" : r.str;
    return st;
}

Status RedisStore::ping() {
    if (nodes->redlock()) return nodes->need_majority(nodes->command_everywhere({"PING"}), "");
    return server->ping(Clock::now() + client.options.connect_timeout +
                        client.options.command_timeout);
}

}  // namespace deadbolt::detail
