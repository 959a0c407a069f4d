#include "core/token.hpp"

#include <pthread.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <stdexcept>

namespace deadbolt::detail {
namespace {

constexpr std::size_t kRandomHex = 32;

// The host name as a token may carry it: no ':' (the separator) and nothing a channel pattern
// or a terminal would read specially.
std::string token_host() {
    char buf[256] = {};
    std::string host = gethostname(buf, sizeof buf - 1) == 0 ? buf : "";
    if (host.size() > 64) host.resize(64);
    for (auto& ch : host) {
        bool plain = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                     (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' || ch == '_';
        if (!plain) ch = '_';
    }
    return host.empty() ? "unknown" : host;
}

// Bytes from the OS CSPRNG, fetched a page at a time per thread: a getrandom per token was a
// tenth of an asynchronous cycle's system calls. A forked child must never hand out bytes its
// parent also holds (a reused pid would then repeat a token), so fork() empties every buffer.
std::atomic<unsigned> fork_generation{0};
std::atomic<int> cached_pid{0};

void after_fork_in_child() {
    fork_generation.fetch_add(1, std::memory_order_relaxed);
    cached_pid.store(static_cast<int>(getpid()), std::memory_order_relaxed);
}

int current_pid() {
    static const bool registered = [] {
        cached_pid.store(static_cast<int>(getpid()), std::memory_order_relaxed);
        return pthread_atfork(nullptr, nullptr, after_fork_in_child) == 0;
    }();
    return registered ? cached_pid.load(std::memory_order_relaxed) : static_cast<int>(getpid());
}

struct RandomPool {
    std::array<unsigned char, 4096> bytes{};
    std::size_t used = bytes.size();
    unsigned generation = 0;

    const unsigned char* take(std::size_t n) {
        unsigned g = fork_generation.load(std::memory_order_relaxed);
        if (used + n > bytes.size() || generation != g) refill(g);
        used += n;
        return bytes.data() + used - n;
    }

    void refill(unsigned g) {
        std::size_t got = 0;
        while (got < bytes.size()) {
            ssize_t n = getrandom(bytes.data() + got, bytes.size() - got, 0);
            if (n < 0) {
                if (errno == EINTR) continue;
                throw std::runtime_error("getrandom failed: no OS randomness for lock tokens");
            }
            got += static_cast<std::size_t>(n);
        }
        used = 0;
        generation = g;
    }
};

// Appends kRandomHex hex digits to out.
void append_random_hex(std::string& out) {
    thread_local RandomPool pool;
    const unsigned char* bytes = pool.take(kRandomHex / 2);
    static constexpr char kHex[] = "0123456789abcdef";
    // Written into room made once: a += per digit checked the capacity 64 times (half the
    // token's instructions).
    const std::size_t at = out.size();
    out.resize(at + kRandomHex);
    char* p = out.data() + at;
    for (std::size_t i = 0; i < kRandomHex / 2; ++i) {
        *p++ = kHex[bytes[i] >> 4];
        *p++ = kHex[bytes[i] & 15];
    }
}

// The next ':'-separated field of rest, consumed.
std::string_view take_field(std::string_view& rest) {
    auto colon = rest.find(':');
    auto field = rest.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
    return field;
}

}  // namespace

std::string random_token() {
    // Host names do not change under a running process; the pid does across fork(), so the
    // "<host>:<pid>:" each thread keeps is made again when it does. Built in one allocation:
    // writing host and pid anew each time was a third of the token's instructions. The kept
    // text is plain chars: a token made as the thread exits (a lock taken in a destructor)
    // must not read a thread_local string already destroyed.
    static const std::string host = token_host();
    thread_local std::array<char, 96> prefix;  // host (64 at most), ':', pid, ':'
    thread_local std::size_t prefix_size = 0;
    thread_local int prefix_pid = 0;
    if (const int pid = current_pid(); pid != prefix_pid) {
        char* p = std::copy(host.begin(), host.end(), prefix.begin());
        *p++ = ':';
        auto [end, ec] = std::to_chars(p, prefix.end() - 1, pid);
        p = ec == std::errc{} ? end : p;
        *p++ = ':';
        prefix_size = static_cast<std::size_t>(p - prefix.begin());
        prefix_pid = pid;
    }
    std::string out;
    out.reserve(prefix_size + kRandomHex);
    out.append(prefix.data(), prefix_size);
    append_random_hex(out);
    return out;
}

std::optional<TokenOrigin> token_origin(std::string_view token) {
    std::string_view rest = token;
    auto host = take_field(rest);
    auto pid_s = take_field(rest);
    auto hex = take_field(rest);
    TokenOrigin o{std::string(host), 0};
    auto [end, ec] = std::from_chars(pid_s.data(), pid_s.data() + pid_s.size(), o.pid);
    bool is_hex = hex.size() == kRandomHex &&
                  hex.find_first_not_of("0123456789abcdef") == std::string_view::npos;
    if (host.empty() || ec != std::errc{} || end != pid_s.data() + pid_s.size() || o.pid <= 0 ||
        !is_hex)
        return std::nullopt;
    return o;
}

std::optional<TokenOrigin> this_origin() noexcept {
    try {
        return token_origin(random_token());
    } catch (const std::exception&) {  // no randomness: the holdings name no host
        return std::nullopt;
    }
}

}  // namespace deadbolt::detail
