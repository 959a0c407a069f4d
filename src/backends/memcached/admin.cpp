// What a client sees of memcached locks without holding them: a lock item's holder and TTL
// and its fence counter (status), the lock items under a pattern (list, from the server's
// `lru_crawler metadump`, one request per server), and force-unlock (the item deleted
// whatever holds it; its holder learns at its next renewal or check).
#include <fmt/format.h>

#include <charconv>
#include <set>

#include "backends/memcached/keys.hpp"
#include "backends/memcached/store.hpp"
#include "core/name_pattern.hpp"
#include "core/quorum.hpp"
#include "core/token.hpp"
#include "core/url_text.hpp"

namespace deadbolt::detail {
namespace {

LockStatus status_of(const MetaReply& lock, const MetaReply& fence) {
    LockStatus s;
    std::uint64_t f = 0;
    if (fence.code == "VA")
        std::from_chars(fence.value.data(), fence.value.data() + fence.value.size(), f);
    s.last_fence = f;
    if (lock.code != "VA") {
        s.kind = "free";
        return s;
    }
    s.held = true;
    auto t = lock.number('t').value_or(-1);
    s.ttl = std::chrono::milliseconds(t < 0 ? -1 : t * 1000);
    s.holders = 1;
    Holder h;
    h.ttl = s.ttl;
    std::string token = lock.value;
    if (auto r = mc_parse_reentrant(lock.value)) {
        s.kind = "reentrant";
        token = r->owner;
    } else {
        s.kind = "mutex";
    }
    if (auto o = token_origin(token)) {
        h.host = o->host;
        h.pid = o->pid;
    } else {
        h.client = "another memcached client";
    }
    s.held_by.push_back(std::move(h));
    return s;
}

}  // namespace

Status McStore::statuses(const std::vector<std::string>& names,
                         std::vector<std::pair<LockStatus, Status>>& out) {
    McRequest req;
    for (const auto& n : names) {
        auto k = keys(n);
        req.text += meta_request("mg", k.lock(), "v t");
        req.text += meta_request("mg", k.fence(), "v");
        req.replies += 2;
    }
    auto answers = nodes_->round(std::vector<McRequest>(nodes_->size(), req), deadline());
    int answered = 0;
    Status why;
    for (const auto& a : answers) {
        if (a.status.ok())
            ++answered;
        else if (why.ok())
            why = a.status;
    }
    if (answered < majority(static_cast<int>(nodes_->size()))) return why;
    out.clear();
    for (std::size_t i = 0; i < names.size(); ++i) {
        std::vector<LockStatus> per;
        for (const auto& a : answers)
            if (a.status.ok()) per.push_back(status_of(a.replies[2 * i], a.replies[2 * i + 1]));
        out.emplace_back(
            one() ? per.front() : majority_status(per, static_cast<int>(nodes_->size())), Status{});
    }
    return {};
}

Status McStore::lock_names(std::string_view pattern, std::vector<std::string>& names) {
    names.clear();
    const std::string& prefix = client_.options.key_prefix;
    std::set<std::string> seen;
    for (std::size_t i = 0; i < nodes_->size(); ++i) {
        std::vector<std::string> lines;
        if (Status st = nodes_->lines(i, "lru_crawler metadump all\r\n",
                                      deadline() + std::chrono::seconds(10), lines);
            !st.ok())
            return st;
        for (const auto& line : lines) {
            if (!line.starts_with("key=")) continue;
            std::string raw;
            if (!percent_decode(std::string_view(line).substr(4, line.find(' ') - 4), raw))
                continue;
            auto name = mc_name_of(prefix, raw);
            if (name && name_matches(pattern, *name)) seen.insert(std::move(*name));
        }
    }
    names.assign(seen.begin(), seen.end());
    return {};
}

Status McStore::force_unlock(const std::string& name, std::string& kind) {
    std::vector<std::pair<LockStatus, Status>> st;
    if (Status s = statuses({name}, st); !s.ok()) return s;
    kind = st.front().first.kind;
    McRequest del{meta_request("md", keys(name).lock(), ""), 1};
    auto answers = nodes_->round(std::vector<McRequest>(nodes_->size(), del), deadline());
    for (const auto& a : answers)
        if (!a.status.ok()) return a.status;
    return {};
}

}  // namespace deadbolt::detail
