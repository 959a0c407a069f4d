// History: what torture workers record, one JSON object per line, on one monotonic clock
// (CLOCK_MONOTONIC, shared by every process on the machine).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace deadbolt::torture {

/// Nanoseconds on CLOCK_MONOTONIC.
std::int64_t now_ns();

/// A validity that never ends (the naive schemes have no notion of one).
inline constexpr std::int64_t kForever = std::numeric_limits<std::int64_t>::max();

struct Event {
    enum class Kind { acquire_invoke, acquire_ok, acquire_fail, acquire_unknown, write, release };
    Kind kind = Kind::acquire_invoke;
    int worker = 0;
    std::int64_t t = 0;                   // when it happened (ns, CLOCK_MONOTONIC)
    std::uint64_t fence = 0;              // acquire_ok, write
    std::int64_t valid_until = kForever;  // acquire_ok / release: the lease's local deadline
                                          // (renewals move it; release carries the last one)
    bool accepted = true;                 // write: the data server took it
    std::int64_t value = 0;               // write: the value written
    std::int64_t invoked = 0;  // acquire_ok, write: when it was sent (t is when it answered)
};

/// One line of JSON for e.
std::string to_json(const Event& e);
/// Parses one line; nullopt (and *why) if it is not an event.
std::optional<Event> from_json(const std::string& line, std::string* why = nullptr);

/// Reads every event of a stream (one per line); throws std::runtime_error naming the line.
std::vector<Event> read_history(std::istream& in);

}  // namespace deadbolt::torture
