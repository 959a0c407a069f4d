// Memcached's protocol as text (doc/protocol.txt of memcached >= 1.6): the requests deadbolt
// sends (meta commands, and the classic add and cas to store) and a parser of the replies. Pure;
// unit-tested against a real server's replies. Why not libmemcached: Debian's 1.1 speaks only the
// classic protocol, which has no owner-checked delete (a compare-and-delete is `md <key> C<cas>`,
// meta only).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace deadbolt::detail {

/// One reply: its code (the meta HD, VA, EN, NS, EX, NF, MN; the classic STORED, NOT_STORED,
/// EXISTS, NOT_FOUND) or the error line's first word (ERROR, CLIENT_ERROR, SERVER_ERROR) with
/// the rest in `value`, its flags, and a VA's data.
struct MetaReply {
    // One of the protocol's words, kept by the parser in static storage: copying it into a
    // string per reply was a tenth of the parse.
    std::string_view code;
    std::string flags;  // as returned, space-separated: each a flag letter, then its token
    std::string value;  // VA: the data block; an error line: its message

    /// The token of flag f ('c': the CAS, 't': the TTL left), when the reply carries it.
    std::optional<std::string_view> flag(char f) const;
    /// flag(f) as a number, when it is one.
    std::optional<std::int64_t> number(char f) const;
    bool error() const;
};

/// t as a decimal number with an optional '-' (one), when it is wholly one of at most 19
/// digits and an int64 holds it.
std::optional<std::int64_t> decimal(std::string_view t);

/// Reads replies from the bytes a connection received, in order; what is not a whole reply
/// yet stays for the next feed.
class MetaParser {
  public:
    enum class Result : unsigned char { reply, need_more, garbage };
    void feed(std::string_view bytes) { buf_.append(bytes); }
    /// The next whole reply into out (every field written; nothing on need_more); garbage
    /// when the bytes are not the meta protocol (what was seen is in out.value).
    Result next(MetaReply& out);

  private:
    // The bytes before `to` are read: they go once they are most of the buffer.
    void consumed(std::size_t to);

    std::string buf_;
    std::size_t at_ = 0;
};

/// The longest key memcached takes, in bytes.
constexpr std::size_t kMaxKeyBytes = 250;
/// Standard base64 (with padding) of raw, and back (nullopt when not base64).
std::string base64(std::string_view raw);
std::optional<std::string> unbase64(std::string_view text);

/// A meta request line for command cm ("mg", "md", "ma", "mn") on key with flags
/// (space-separated).
std::string meta_request(std::string_view cm, std::string_view key, std::string_view flags);
/// meta_request appended to out: a round's requests are written into one buffer.
void append_meta(std::string& out, std::string_view cm, std::string_view key,
                 std::string_view flags);
/// append_meta with one flag, a letter and a number ("md <key> C123").
void append_meta(std::string& out, std::string_view cm, std::string_view key, char f,
                 std::uint64_t n);
/// A flag letter and a number ("C123", "J7") appended to out, for append_meta's flags.
void append_flag(std::string& out, char f, std::uint64_t n);
/// A store in the classic protocol: `add` (cas 0) or `cas` of value under key for ttl_s
/// seconds. Why not the meta set: memcached's `ms` deletes the item under its key when it
/// cannot get memory for the new one, whatever its mode or CAS (proto_text.c, "Avoid stale
/// data"), so under memory exhaustion a waiter's add would delete the holder's lock; `add`
/// and `cas` leave it. Replies: STORED, NOT_STORED (add), EXISTS or NOT_FOUND (cas).
std::string classic_store(const std::string& key, std::int64_t ttl_s, std::string_view value,
                          std::uint64_t cas = 0);
/// classic_store appended to out.
void append_classic_store(std::string& out, std::string_view key, std::int64_t ttl_s,
                          std::string_view value, std::uint64_t cas = 0);

/// The longest relative TTL, in seconds: memcached reads a longer one as a Unix time, long past,
/// and ends the item at once while still answering STORED (protocol.txt, REALTIME_MAXDELTA).
constexpr std::int64_t kLongestRelativeTtlS = 60LL * 60 * 24 * 30;

/// A TTL of a holding kept for keep: whole seconds, rounded up, plus two, so that the server
/// never drops it before keep has passed. memcached's clock is whole seconds, raised by a timer
/// that re-arms itself a second after each tick; when a tick's phase drifts across a second
/// boundary the clock skips a second, so an item stored just before can be almost two seconds
/// older than the clock says (memcached.c, clock_handler and realtime).
constexpr std::int64_t ttl_seconds(std::int64_t keep_ms) {
    return (keep_ms + 999) / 1000 + 2;
}

/// The longest keep a holding may have: its ttl_seconds() is the longest relative TTL.
constexpr std::chrono::milliseconds kLongestMcKeep =
    std::chrono::seconds(kLongestRelativeTtlS) - std::chrono::seconds(2);
static_assert(ttl_seconds(kLongestMcKeep.count()) == kLongestRelativeTtlS);
static_assert(ttl_seconds(kLongestMcKeep.count() + 1) > kLongestRelativeTtlS);

}  // namespace deadbolt::detail
