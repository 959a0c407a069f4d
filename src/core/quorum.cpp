#include "core/quorum.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace deadbolt::detail {
namespace {

// A remaining TTL for ordering: -1 (no expiry) sorts after every finite one.
std::chrono::milliseconds until_expiry(std::chrono::milliseconds ttl) {
    return ttl.count() < 0 ? std::chrono::milliseconds::max() : ttl;
}

std::string_view field(std::string_view info, std::string_view name) {
    std::string key = std::string(name) + ":";
    for (std::size_t at = 0; at < info.size();) {
        auto eol = info.find('\n', at);
        auto line = info.substr(at, eol == std::string_view::npos ? eol : eol - at);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.substr(0, key.size()) == key) return line.substr(key.size());
        if (eol == std::string_view::npos) break;
        at = eol + 1;
    }
    return {};
}

}  // namespace

std::uint64_t redlock_fence(const std::vector<std::uint64_t>& counters, std::uint64_t floor_us) {
    std::uint64_t high = floor_us;
    for (auto c : counters) high = std::max(high, c);
    return high + 1;
}

std::optional<std::uint64_t> agreed_in_round1(const std::vector<std::uint64_t>& counters,
                                              std::size_t quorum) {
    if (counters.empty() || quorum == 0) return std::nullopt;
    const std::uint64_t high = *std::max_element(counters.begin(), counters.end());
    if (static_cast<std::size_t>(std::count(counters.begin(), counters.end(), high)) < quorum)
        return std::nullopt;
    return high;
}

std::chrono::milliseconds node_timeout(std::chrono::milliseconds ttl,
                                       std::chrono::milliseconds command_timeout) {
    return std::max(std::chrono::milliseconds(1), std::min(ttl / 10, command_timeout));
}

NodeSetCheck check_node_set(const std::vector<std::string>& addresses, bool allow_fewer) {
    NodeSetCheck out;
    std::set<std::string> seen;
    for (const auto& a : addresses)
        if (!seen.insert(a).second) {
            out.status = Status::error(
                errc::invalid_argument,
                fmt::format("redlock node {} is listed twice: its vote would count twice; list "
                            "each independent master once",
                            a));
            return out;
        }
    auto n = addresses.size();
    if (n < 3 && !allow_fewer) {
        out.status = Status::error(
            errc::invalid_argument,
            fmt::format("redlock needs at least 3 independent masters, not {}: with fewer, one "
                        "crash stops every lock (add allow_fewer=1 to the URL to accept that)",
                        n));
        return out;
    }
    if (n > 0 && n % 2 == 0)
        out.warning = fmt::format(
            "redlock with {} nodes tolerates {} failures, no more than {} nodes would: use an "
            "odd count",
            n, n - majority(static_cast<int>(n)), n - 1);
    return out;
}

Tally tally(int yes, int no, int n) {
    if (yes >= majority(n)) return Tally::yes;
    if (no > n - majority(n)) return Tally::no;
    return Tally::undecided;
}

std::chrono::milliseconds redlock_wait(std::vector<std::chrono::milliseconds> refusals,
                                       int free_nodes, int n) {
    int must_expire = majority(n) - free_nodes;
    if (must_expire <= 0 || refusals.empty()) return std::chrono::milliseconds(0);
    must_expire = std::min(must_expire, static_cast<int>(refusals.size()));
    // Keys without expiry never free their node: order them last.
    std::sort(refusals.begin(), refusals.end(),
              [](auto a, auto b) { return until_expiry(a) < until_expiry(b); });
    return refusals[static_cast<std::size_t>(must_expire - 1)];
}

NodeRole parse_role(std::string_view info) {
    NodeRole r;
    r.master = field(info, "role") == "master";
    r.master_host = std::string(field(info, "master_host"));
    r.master_port = std::string(field(info, "master_port"));
    return r;
}

LockStatus majority_status(const std::vector<LockStatus>& answered, int n) {
    LockStatus out;
    out.kind = "free";
    std::vector<std::chrono::milliseconds> ttls;
    std::vector<std::uint64_t> fences;
    // Who holds it: as the node that saw the highest fence says (the latest grant).
    const LockStatus* latest = nullptr;
    for (const auto& s : answered) {
        fences.push_back(s.last_fence);
        if (!s.held) continue;
        ttls.push_back(s.ttl);
        if (!latest || s.last_fence > latest->last_fence) latest = &s;
    }
    auto need = static_cast<std::size_t>(majority(n));
    // The last fence agreed is on a majority: the need-th highest. One node's counter alone
    // may be ahead (its own round 1 value of a grant decided without it); it was never agreed.
    std::sort(fences.begin(), fences.end(), std::greater<>());
    if (!fences.empty()) out.last_fence = fences[std::min(need, fences.size()) - 1];
    if (!latest || ttls.size() < need) return out;
    out.held = true;
    out.kind = "mutex";
    for (const auto& s : answered)
        if (s.held) out.kind = s.kind;  // the nodes agree on what the key is
    out.holders = 1;
    out.held_by = latest->held_by;
    out.value = latest->value;
    // Held until all but need - 1 of these keys expire: the need-th longest TTL (no expiry
    // counts as the longest).
    std::sort(ttls.begin(), ttls.end(),
              [](auto a, auto b) { return until_expiry(a) > until_expiry(b); });
    out.ttl = ttls[need - 1];
    return out;
}

Leader majority_leader(const std::vector<Leader>& answered, int n) {
    auto need = static_cast<std::size_t>(majority(n));
    std::map<std::uint64_t, std::vector<const Leader*>> by_term;
    for (const auto& l : answered)
        if (l.elected) by_term[l.term].push_back(&l);
    for (auto& [term, group] : by_term) {
        if (group.size() < need) continue;
        std::map<std::string, std::size_t> votes;
        for (const auto* l : group) ++votes[l->value];
        Leader out = *group.front();
        for (const auto& [value, count] : votes)
            if (count > votes[out.value]) out.value = value;
        std::sort(group.begin(), group.end(),
                  [](auto* a, auto* b) { return until_expiry(a->ttl) > until_expiry(b->ttl); });
        out.ttl = group[need - 1]->ttl;
        return out;
    }
    return {};
}

}  // namespace deadbolt::detail
