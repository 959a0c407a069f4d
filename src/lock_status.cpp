// What a client can see of locks without holding them: status of one name, list of many.
#include <fmt/format.h>

#include <set>

#include "backends/redis/commands.hpp"
#include "backends/redis/keys.hpp"
#include "backends/redis/replies.hpp"
#include "backends/redis/scripts.hpp"
#include "backends/redis/store.hpp"
#include "core/client_impl.hpp"
#include "core/quorum.hpp"
#include "core/token.hpp"
#include "core/validity.hpp"
#include "deadbolt/client.hpp"
#include "deadbolt/error.hpp"

namespace deadbolt {
namespace {

using SysClock = std::chrono::system_clock;

// Fences are their grant's server time in microseconds (next_fence); anything before 2001 is
// an old counter, not a time.
constexpr std::uint64_t kFirstTimeFence = 1'000'000'000'000'000;
// Names per pipeline when listing: bounded replies, bounded time per round trip.
constexpr std::size_t kStatusBatch = 256;

std::optional<SysClock::time_point> grant_time(const detail::Reply& fence) {
    std::uint64_t us = 0;
    if (fence.is_nil() || fence.str.empty() || !detail::to_u64(fence, us) || us < kFirstTimeFence)
        return std::nullopt;
    return SysClock::time_point(
        std::chrono::duration_cast<SysClock::duration>(std::chrono::microseconds(us)));
}

// One holder from the status script's (token, fence, ms) triple. A fence says when the holder
// was granted only when the token is deadbolt's: a redis-py holder never wrote one.
Holder parse_holder(const detail::Reply& token, const detail::Reply& fence,
                    const detail::Reply& ms) {
    Holder h;
    h.ttl = std::chrono::milliseconds(ms.integer);
    if (auto origin = detail::token_origin(token.str)) {
        h.host = std::move(origin->host);
        h.pid = origin->pid;
        h.since = grant_time(fence);
    }
    return h;
}

LockStatus parse_status(const detail::Reply& r) {
    if (r.type != detail::Reply::Type::array || r.elements.size() != 9 ||
        r.elements[7].elements.size() % 3 != 0)
        throw ServerError(make_error_code(errc::protocol_error), "unexpected status reply");
    const auto& e = r.elements;
    LockStatus s;
    s.kind = e[0].str;
    s.held = s.kind != "free";
    s.ttl = std::chrono::milliseconds(s.held ? e[1].integer : 0);
    if (!e[2].is_nil() && !detail::to_u64(e[2], s.last_fence)) s.last_fence = 0;
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

// The status of each name (one pipeline per batch); a name's error is in its Status (foreign
// data under it: wrong_type). Throws when the servers cannot be asked at all.
std::vector<std::pair<LockStatus, detail::Status>> statuses(detail::ClientImpl& impl,
                                                            const std::vector<std::string>& names) {
    static const std::string most = std::to_string(kMaxListedHolders);
    std::vector<std::vector<std::string>> keys;
    std::vector<detail::ScriptCall> calls;
    keys.reserve(names.size());
    for (const auto& name : names) {
        keys.push_back(detail::every_key_of(impl.options.key_prefix, name));
        calls.push_back(
            {&detail::status_script(), {keys.back().begin(), keys.back().end()}, {most}});
    }
    std::vector<std::pair<LockStatus, detail::Status>> out(names.size());
    auto one = [&](const detail::Reply& r, std::pair<LockStatus, detail::Status>& to) {
        if (r.is_error())
            to.second = detail::from_server_error(r.str);
        else
            to.first = parse_status(r);
    };
    if (!redis(impl).nodes->redlock()) {
        std::vector<detail::Reply> replies;
        redis(impl).server->eval_many(calls, replies, impl.deadline()).throw_if_error();
        for (std::size_t i = 0; i < calls.size(); ++i) one(replies[i], out[i]);
        return out;
    }
    auto results = redis(impl).nodes->everywhere(calls, impl.deadline());
    redis(impl).nodes->need_majority(results, "").throw_if_error();
    for (std::size_t i = 0; i < calls.size(); ++i) {
        std::vector<LockStatus> per_node;
        for (const auto& r : results) {
            if (!r.status.ok()) continue;
            std::pair<LockStatus, detail::Status> node;
            one(r.replies[i], node);
            if (!node.second.ok()) out[i].second = node.second;
            per_node.push_back(std::move(node.first));
        }
        if (out[i].second.ok())
            out[i].first =
                detail::majority_status(per_node, static_cast<int>(redis(impl).nodes->size()));
    }
    return out;
}

// Appends the keys matching `match` on c to out (SCAN, never KEYS: the server stays
// responsive however many keys it has).
detail::Status scan(detail::Connection& c, const std::string& match, std::set<std::string>& out,
                    std::chrono::milliseconds timeout) {
    std::string cursor = "0";
    do {
        detail::Reply r;
        auto st = detail::command(c, {"SCAN", cursor, "MATCH", match, "COUNT", "1000"}, r,
                                  detail::Clock::now() + timeout);
        if (!st.ok()) return st;
        if (r.type != detail::Reply::Type::array || r.elements.size() != 2)
            return detail::Status::error(errc::protocol_error, "unexpected SCAN reply");
        cursor = r.elements[0].str;
        for (const auto& key : r.elements[1].elements) out.insert(key.str);
    } while (cursor != "0");
    return {};
}

// Held by something deadbolt recognises as its own: plain strings and numbers another tool
// wrote (a redis-py lock, any counter) look like a Mutex and a latch.
bool deadbolt_wrote(const LockStatus& s) {
    if (s.kind == "latch") return false;
    if (s.kind != "mutex") return true;
    return !s.held_by.empty() && !s.held_by.front().host.empty();
}

}  // namespace

LockStatus Client::status(std::string_view name) const {
    detail::validate_name(name).throw_if_error();
    auto found = statuses(*impl_, {std::string(name)});
    found.front().second.throw_if_error();
    return std::move(found.front().first);
}

std::vector<ListedLock> Client::list(std::string_view pattern, bool include_foreign) const {
    if (pattern.empty())
        throw UsageError(make_error_code(errc::invalid_argument),
                         "list: empty pattern; \"*\" lists every lock");
    const std::string& prefix = impl_->options.key_prefix;
    std::string match = detail::glob_escape(prefix) + std::string(pattern);
    std::vector<std::shared_ptr<detail::Connection>> primaries;
    std::vector<detail::Connection*> nodes;
    if (redis(*impl_).nodes->redlock()) {
        for (std::size_t i = 0; i < redis(*impl_).nodes->size(); ++i)
            nodes.push_back(&redis(*impl_).nodes->node(i));
    } else {
        primaries = redis(*impl_).server->primaries();
        for (const auto& p : primaries) nodes.push_back(p.get());
    }
    std::set<std::string> keys;
    std::size_t answered = 0;
    detail::Status failed;
    for (auto* node : nodes) {
        if (auto st = scan(*node, match, keys, impl_->options.command_timeout); !st.ok())
            failed = st;
        else
            ++answered;
    }
    // Redlock: a lock is held only where a majority holds it, so a majority's keys suffice.
    bool enough = redis(*impl_).nodes->redlock()
                      ? answered >= static_cast<std::size_t>(detail::majority(
                                        static_cast<int>(redis(*impl_).nodes->size())))
                      : failed.ok();
    if (!enough) {
        if (failed.ec == make_error_code(errc::permission_denied))
            failed.detail += " (deadbolt list needs SCAN: grant +scan, or list as another user)";
        failed.throw_if_error();
    }
    std::vector<std::string> names;
    for (const auto& key : keys) {
        std::string name = key.substr(prefix.size());
        if (!detail::is_aux_key(key) && detail::validate_name(name).ok())
            names.push_back(std::move(name));
    }
    std::vector<ListedLock> out;
    for (std::size_t at = 0; at < names.size(); at += kStatusBatch) {
        std::vector<std::string> batch(
            names.begin() + static_cast<std::ptrdiff_t>(at),
            names.begin() + static_cast<std::ptrdiff_t>(std::min(names.size(), at + kStatusBatch)));
        auto found = statuses(*impl_, batch);
        for (std::size_t i = 0; i < batch.size(); ++i) {
            auto& [s, st] = found[i];
            if (st.ec == make_error_code(errc::wrong_type)) continue;  // not a lock
            st.throw_if_error();
            if (s.held && (include_foreign || deadbolt_wrote(s)))
                out.push_back({std::move(batch[i]), std::move(s)});
        }
    }
    return out;
}

}  // namespace deadbolt
