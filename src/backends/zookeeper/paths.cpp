#include "backends/zookeeper/paths.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <random>

#include "core/reentrant_value.hpp"
#include "core/token.hpp"
#include "core/url_text.hpp"

namespace deadbolt::detail {
namespace {

constexpr std::string_view kMarkers[] = {"-lock-",    "__lock__", "__WRIT__", "__READ__",
                                         "__rlock__", "-latch-",  "-lease-"};
constexpr std::string_view kReaders[] = {"__READ__", "__rlock__"};
constexpr std::string_view kKazoo[] = {"__lock__", "__rlock__"};
constexpr std::string_view kTimeoutField = " session_timeout=";
constexpr std::size_t kSeqDigits = 10;  // ZooKeeper's sequence suffix: %010d

// The length of the UTF-8 sequence at s[i] when it encodes a code point that a Java string
// keeps and ZooKeeper accepts in a path; 0 when it does not.
std::size_t kept_utf8(std::string_view s, std::size_t i) {
    auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
    unsigned char c = b(0);
    std::size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
    if (n == 0 || n > 4 || i + n > s.size() || c > 0xF4) return 0;
    char32_t cp = c & (0x7F >> n);
    for (std::size_t k = 1; k < n; ++k) {
        if ((b(k) & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (b(k) & 0x3F);
    }
    const char32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10FFFF) return 0;
    // ZooKeeper's PathUtils refuses these ranges.
    if (cp <= 0x9F || (cp >= 0xD800 && cp <= 0xF8FF) || (cp >= 0xFFF0 && cp <= 0xFFFF)) return 0;
    return n;
}

void escape_part(std::string_view part, std::string& out) {
    if (part == "." || part == "..") {
        for (std::size_t i = 0; i < part.size(); ++i) out += "%2E";
        return;
    }
    for (std::size_t i = 0; i < part.size();) {
        auto c = static_cast<unsigned char>(part[i]);
        if (c >= 0x80) {
            if (std::size_t n = kept_utf8(part, i); n > 0) {
                out.append(part.substr(i, n));
                i += n;
                continue;
            }
        }
        if (c < 0x20 || c == 0x7F || c == '%' || c >= 0x80)
            out += fmt::format("%{:02X}", c);
        else
            out += static_cast<char>(c);
        ++i;
    }
}

}  // namespace

std::string znode_of(std::string_view name, std::string& why) {
    std::string out;
    for (std::size_t start = 0;;) {
        auto slash = name.find('/', start);
        auto part = name.substr(start, slash == std::string_view::npos ? name.npos : slash - start);
        if (part.empty()) {
            why = fmt::format(
                "on ZooKeeper a lock name is a path under the chroot: '{}' has an empty part "
                "(a leading, trailing or doubled '/'); write it as a/b",
                name);
            return {};
        }
        out += '/';
        escape_part(part, out);
        if (slash == std::string_view::npos) break;
        start = slash + 1;
    }
    return out;
}

std::string name_of_znode(std::string_view path) {
    if (path.starts_with('/')) path.remove_prefix(1);
    std::string out;
    // Every escape znode_of writes is well formed; a path of another tool that is not (a
    // lone '%') names itself.
    if (!percent_decode(path, out)) out = std::string(path);
    return out;
}

std::string new_guid() {
    thread_local std::mt19937_64 rng{std::random_device{}()};
    auto hi = rng(), lo = rng();
    std::string hex = fmt::format("{:016x}{:016x}", hi, lo);
    return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" +
           hex.substr(16, 4) + "-" + hex.substr(20, 12);
}

std::string contender_prefix(std::string_view guid, Queues as) {
    constexpr std::string_view kNames[] = {"lock-", "__WRIT__", "__READ__", "latch-", "lease-"};
    return fmt::format("_c_{}-{}", guid, kNames[static_cast<int>(as)]);
}

bool is_reader(std::string_view child) {
    if (child.size() < kSeqDigits) return false;
    auto head = child.substr(0, child.size() - kSeqDigits);
    return std::ranges::any_of(kReaders, [&](std::string_view m) { return head.ends_with(m); });
}

std::optional<std::int64_t> contender_seq(std::string_view child) {
    if (child.size() < kSeqDigits) return std::nullopt;
    auto digits = child.substr(child.size() - kSeqDigits);
    auto head = child.substr(0, child.size() - kSeqDigits);
    if (!std::ranges::any_of(kMarkers, [&](std::string_view m) { return head.ends_with(m); }))
        return std::nullopt;
    std::int64_t seq = 0;
    for (char c : digits) {
        if (c < '0' || c > '9') return std::nullopt;
        seq = seq * 10 + (c - '0');
    }
    return seq;
}

std::vector<Contender> in_line(const std::vector<std::string>& children) {
    std::vector<Contender> line;
    for (const auto& c : children)
        if (auto seq = contender_seq(c)) line.push_back({c, *seq});
    std::ranges::sort(line, {}, &Contender::seq);
    return line;
}

std::optional<std::size_t> find_own(const std::vector<Contender>& line, std::string_view guid) {
    auto prefix = fmt::format("_c_{}-", guid);
    for (std::size_t i = 0; i < line.size(); ++i)
        if (line[i].name.starts_with(prefix)) return i;
    return std::nullopt;
}

bool is_candidate(std::string_view child) {
    return child.size() > kSeqDigits &&
           child.substr(0, child.size() - kSeqDigits).ends_with("-latch-");
}

std::string_view layout_of(std::string_view child) {
    auto head = child.substr(0, child.size() - std::min(child.size(), kSeqDigits));
    return std::ranges::any_of(kKazoo, [&](std::string_view m) { return head.ends_with(m); })
               ? "Kazoo"
               : "Curator";
}

std::string holder_data(std::string_view token, std::chrono::milliseconds session_timeout) {
    return fmt::format("{}{}{}ms", token, kTimeoutField, session_timeout.count());
}

HolderData parse_holder_data(std::string_view data) {
    auto at = data.rfind(kTimeoutField);
    if (at == std::string_view::npos || !data.ends_with("ms")) return {data};
    auto digits = data.substr(at + kTimeoutField.size());
    digits.remove_suffix(2);
    std::int64_t ms = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), ms);
    if (ec != std::errc() || end != digits.data() + digits.size() || ms <= 0) return {data};
    return {data.substr(0, at), std::chrono::milliseconds(ms)};
}

NodeHolder holder_of(std::string_view child, std::string_view data) {
    NodeHolder out;
    out.who.ttl = std::chrono::milliseconds(-1);
    auto origin = [&](std::string_view token) {
        auto o = token_origin(token);
        if (o) out.who.host = o->host, out.who.pid = o->pid;
        return o.has_value();
    };
    if (auto r = parse_reentrant(data)) {  // ours: a custom owner id names no origin
        origin(r->second);
        return out;
    }
    auto d = parse_holder_data(data);
    if (origin(d.token)) {
        out.session_timeout = d.session_timeout;
        return out;
    }
    out.who.client = layout_of(child);
    return out;
}

}  // namespace deadbolt::detail
