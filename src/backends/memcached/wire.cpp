#include "backends/memcached/wire.hpp"

#include <algorithm>
#include <charconv>
#include <concepts>
#include <iterator>
#include <limits>

namespace deadbolt::detail {
namespace {
// The first words of the error lines, which answer a request of any kind.
constexpr std::string_view kErrors[] = {"ERROR", "CLIENT_ERROR", "SERVER_ERROR"};

// s = v, keeping s's room: assign() takes the general path of replace(), which was most of a
// reply's parse.
void put(std::string& s, std::string_view v) {
    s.clear();
    s.append(v.data(), v.size());
}
}  // namespace

// Digits read straight into a number: from_chars was a twentieth of a memcached cycle for the
// few numbers in its replies.
std::optional<std::int64_t> decimal(std::string_view t) {
    const bool minus = !t.empty() && t.front() == '-';
    if (minus) t.remove_prefix(1);
    if (t.empty() || t.size() > 19) return std::nullopt;  // 19 digits hold every int64
    std::uint64_t v = 0;
    for (char c : t) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + static_cast<std::uint64_t>(c - '0');  // below 10^19 < 2^64: no wrap
    }
    constexpr auto kMost = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    if (v > kMost + (minus ? 1 : 0)) return std::nullopt;
    return minus ? static_cast<std::int64_t>(0 - v) : static_cast<std::int64_t>(v);
}

std::optional<std::string_view> MetaReply::flag(char f) const {
    std::string_view rest = flags;
    while (!rest.empty()) {
        const auto sp = std::min(rest.find(' '), rest.size());
        const auto t = rest.substr(0, sp);
        if (!t.empty() && t[0] == f) return t.substr(1);
        rest.remove_prefix(std::min(sp + 1, rest.size()));
    }
    return std::nullopt;
}

std::optional<std::int64_t> MetaReply::number(char f) const {
    auto t = flag(f);
    if (!t) return std::nullopt;
    return decimal(*t);
}

bool MetaReply::error() const {
    // The parser gives code only its known words, of which the error words alone end so.
    return code.ends_with("ERROR");
}

MetaParser::Result MetaParser::next(MetaReply& out) {
    auto eol = buf_.find("\r\n", at_);
    if (eol == std::string::npos) {
        // A reply line is short; a long one without an end is not this protocol.
        if (buf_.size() - at_ > 8192) {
            out.code = {};
            out.value = buf_.substr(at_, 64);
            return Result::garbage;
        }
        return Result::need_more;
    }
    // Written into out in place, its strings keeping their room: a reply's temporaries
    // (three strings made, moved and freed) were a tenth of a memcached cycle.
    const std::string_view line(buf_.data() + at_, eol - at_);
    auto garbage = [&out, &line] {
        out.code = {};
        put(out.value, line.substr(0, 64));
        return Result::garbage;
    };
    // The words: the code, then (VA) the data's size, then the flags; no list of them is made
    // (that was a sixth of a cycle's instructions).
    std::size_t i = 0;
    auto word = [&line, &i]() {
        while (i < line.size() && line[i] == ' ') ++i;
        const std::size_t from = i;
        while (i < line.size() && line[i] != ' ') ++i;
        return std::string_view(line.data() + from, i - from);
    };
    const std::string_view code = word();
    // The meta codes, two letters, are most replies: one comparison of both letters each.
    static constexpr std::string_view kMeta = "HDVAENNSEXNFMN";
    static constexpr std::string_view kClassic[] = {"STORED", "EXISTS", "NOT_STORED", "NOT_FOUND"};
    // The word as the parser's own copy (static), or empty when it is none of words.
    auto among = [&code](const auto& words) {
        const auto* w = std::find(std::begin(words), std::end(words), code);
        return w == std::end(words) ? std::string_view{} : *w;
    };
    std::string_view known;
    if (code.size() == 2) {
        for (std::size_t k = 0; k < kMeta.size() && known.empty(); k += 2)
            if (code[0] == kMeta[k] && code[1] == kMeta[k + 1])
                known = std::string_view(kMeta.data() + k, 2);
        if (known.empty()) return garbage();
    } else if (code.data() == line.data() && !(known = among(kErrors)).empty()) {
        // An error line: its first word, at the line's start, and the rest as its message.
        out.code = known;
        out.flags.clear();
        put(out.value, line.substr(std::min(line.size(), code.size() + 1)));
        consumed(eol + 2);
        return Result::reply;
    } else if ((known = among(kClassic)).empty()) {
        return garbage();
    }
    std::size_t body = eol + 2;
    std::string_view data;
    if (known.data() == kMeta.data() + 2) {  // VA
        const auto n = decimal(word());
        if (!n || *n < 0) return garbage();
        const auto size = static_cast<std::size_t>(*n);
        if (buf_.size() < body + size + 2) return Result::need_more;
        if (buf_.compare(body + size, 2, "\r\n") != 0) return garbage();
        data = std::string_view(buf_.data() + body, size);
        body += size + 2;
    }
    // The flags stay one text (a list of them was two allocations per reply).
    while (i < line.size() && line[i] == ' ') ++i;
    std::string_view rest(line.data() + i, line.size() - i);
    while (!rest.empty() && rest.back() == ' ') rest.remove_suffix(1);
    out.code = known;
    put(out.flags, rest);
    put(out.value, data);
    consumed(body);
    return Result::reply;
}

void MetaParser::consumed(std::size_t to) {
    at_ = to;
    if (at_ > 65536 && at_ * 2 > buf_.size()) {  // keep the buffer from growing forever
        buf_.erase(0, at_);
        at_ = 0;
    }
}

namespace {
constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}

std::string base64(std::string_view raw) {
    std::string out;
    out.reserve((raw.size() + 2) / 3 * 4);
    for (std::size_t i = 0; i < raw.size(); i += 3) {
        unsigned v = static_cast<unsigned char>(raw[i]) << 16;
        if (i + 1 < raw.size()) v |= static_cast<unsigned char>(raw[i + 1]) << 8;
        if (i + 2 < raw.size()) v |= static_cast<unsigned char>(raw[i + 2]);
        out += kB64[(v >> 18) & 63];
        out += kB64[(v >> 12) & 63];
        out += i + 1 < raw.size() ? kB64[(v >> 6) & 63] : '=';
        out += i + 2 < raw.size() ? kB64[v & 63] : '=';
    }
    return out;
}

std::optional<std::string> unbase64(std::string_view text) {
    if (text.size() % 4 != 0) return std::nullopt;
    std::string out;
    unsigned v = 0;
    int bits = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (c == '=') {
            if (i + 2 < text.size()) return std::nullopt;
            continue;
        }
        const char* p = std::char_traits<char>::find(kB64, 64, c);
        if (p == nullptr) return std::nullopt;
        v = (v << 6) | static_cast<unsigned>(p - kB64);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((v >> bits) & 0xff);
        }
    }
    return out;
}

namespace {

// A request is written as pieces copied into room made once: an append per piece checked the
// room and measured its text each time (a twelfth of a memcached cycle's instructions).
class Writer {
  public:
    Writer(std::string& out, std::size_t most) : out_(out), at_(out.size()) {
        out_.resize(at_ + most);
    }
    Writer(const Writer&) = delete;
    Writer& operator=(const Writer&) = delete;
    ~Writer() { out_.resize(at_); }

    Writer& operator<<(std::string_view v) {
        std::copy(v.begin(), v.end(), out_.data() + at_);
        at_ += v.size();
        return *this;
    }
    Writer& operator<<(char c) {
        out_[at_++] = c;
        return *this;
    }
    template <std::integral N>
    Writer& operator<<(N n) {
        char* p = out_.data() + at_;
        at_ = static_cast<std::size_t>(std::to_chars(p, p + kDigits, n).ptr - out_.data());
        return *this;
    }

    // The room a number takes at most (a sign and 19 digits, or 20 digits).
    static constexpr std::size_t kDigits = 20;

  private:
    std::string& out_;
    std::size_t at_;
};

}  // namespace

void append_meta(std::string& out, std::string_view cm, std::string_view key,
                 std::string_view flags) {
    Writer w(out, cm.size() + key.size() + flags.size() + 4);
    w << cm << ' ' << key;
    if (!flags.empty()) w << ' ' << flags;
    w << "\r\n";
}

void append_meta(std::string& out, std::string_view cm, std::string_view key, char f,
                 std::uint64_t n) {
    Writer(out, cm.size() + key.size() + Writer::kDigits + 5)
        << cm << ' ' << key << ' ' << f << n << "\r\n";
}

void append_flag(std::string& out, char f, std::uint64_t n) {
    Writer(out, 1 + Writer::kDigits) << f << n;
}

std::string meta_request(std::string_view cm, std::string_view key, std::string_view flags) {
    std::string out;
    out.reserve(cm.size() + key.size() + flags.size() + 4);
    append_meta(out, cm, key, flags);
    return out;
}

std::string classic_store(const std::string& key, std::int64_t ttl_s, std::string_view value,
                          std::uint64_t cas) {
    std::string out;
    out.reserve(key.size() + value.size() + 64);
    append_classic_store(out, key, ttl_s, value, cas);
    return out;
}

void append_classic_store(std::string& out, std::string_view key, std::int64_t ttl_s,
                          std::string_view value, std::uint64_t cas) {
    // "add <key> 0 <ttl> <bytes>[ <cas>]\r\n<value>\r\n"
    Writer w(out, key.size() + value.size() + 3 * Writer::kDigits + 16);
    w << (cas == 0 ? "add " : "cas ") << key << " 0 " << ttl_s << ' ' << value.size();
    if (cas != 0) w << ' ' << cas;
    w << "\r\n" << value << "\r\n";
}

}  // namespace deadbolt::detail
