#include "backends/redis/topology/slots.hpp"

#include <charconv>

#include <fmt/format.h>

namespace deadbolt::detail {
namespace {

bool read_number(std::string_view s, long long max, long long& out) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && p == s.data() + s.size() && out >= 0 && out <= max;
}

// One node entry of CLUSTER SLOTS: [host, port, id, ...].
bool read_node(const Reply& r, std::string_view asked_host, NodeAddress& out) {
    if (r.type != Reply::Type::array || r.elements.size() < 2) return false;
    const Reply& host = r.elements[0];
    const Reply& port = r.elements[1];
    if (host.type != Reply::Type::string || port.type != Reply::Type::integer) return false;
    if (port.integer <= 0 || port.integer > 65535) return false;
    out.host = host.str.empty() || host.str == "?" ? std::string(asked_host) : host.str;
    out.port = static_cast<std::uint16_t>(port.integer);
    return true;
}

}  // namespace

bool parse_cluster_slots(const Reply& reply, std::string_view asked_host,
                         std::vector<SlotRange>& out, std::string* error) {
    auto fail = [&](const std::string& why) {
        if (error) *error = "CLUSTER SLOTS answered " + why;
        return false;
    };
    if (reply.type != Reply::Type::array) return fail("something other than an array");
    out.clear();
    for (const Reply& e : reply.elements) {
        if (e.type != Reply::Type::array || e.elements.size() < 3) return fail("a short entry");
        const Reply& first = e.elements[0];
        const Reply& last = e.elements[1];
        if (first.type != Reply::Type::integer || last.type != Reply::Type::integer ||
            first.integer < 0 || last.integer < first.integer || last.integer >= kSlots)
            return fail(fmt::format("a bad slot range {}-{}", first.integer, last.integer));
        SlotRange range;
        range.first = static_cast<std::uint16_t>(first.integer);
        range.last = static_cast<std::uint16_t>(last.integer);
        if (!read_node(e.elements[2], asked_host, range.master)) return fail("a bad master entry");
        for (std::size_t i = 3; i < e.elements.size(); ++i) {
            NodeAddress replica;
            if (!read_node(e.elements[i], asked_host, replica)) return fail("a bad replica entry");
            range.replicas.push_back(std::move(replica));
        }
        out.push_back(std::move(range));
    }
    return true;
}

Redirect parse_redirect(std::string_view err) {
    Redirect r;
    Redirect::Kind kind = Redirect::Kind::none;
    if (err.starts_with("MOVED "))
        kind = Redirect::Kind::moved;
    else if (err.starts_with("ASK "))
        kind = Redirect::Kind::ask;
    else
        return r;
    err.remove_prefix(kind == Redirect::Kind::moved ? 6 : 4);
    auto space = err.find(' ');
    if (space == std::string_view::npos) return r;
    long long slot = 0;
    if (!read_number(err.substr(0, space), kSlots - 1, slot)) return r;
    std::string_view where = err.substr(space + 1);
    auto colon = where.rfind(':');  // IPv6 hosts hold colons too: the port follows the last
    long long port = 0;
    if (colon == std::string_view::npos || !read_number(where.substr(colon + 1), 65535, port) ||
        port == 0)
        return r;
    std::string_view host = where.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
        host = host.substr(1, host.size() - 2);
    r.kind = kind;
    r.slot = static_cast<std::uint16_t>(slot);
    r.to = {std::string(host), static_cast<std::uint16_t>(port)};
    return r;
}

bool is_cluster_retry(std::string_view err) {
    return err.starts_with("TRYAGAIN") || err.starts_with("CLUSTERDOWN");
}

}  // namespace deadbolt::detail
