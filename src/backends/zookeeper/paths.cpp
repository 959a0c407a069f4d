#include "backends/zookeeper/paths.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <random>

#include "core/url_text.hpp"

namespace deadbolt::detail {
namespace {

constexpr std::string_view kMarkers[] = {"-lock-",    "__lock__", "__WRIT__", "__READ__",
                                         "__rlock__", "-latch-",  "-lease-"};
constexpr std::string_view kReaders[] = {"__READ__", "__rlock__"};
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

}  // namespace deadbolt::detail
