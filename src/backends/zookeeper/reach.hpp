// Whether ZooKeeper's servers take a TCP connection at all, for a first connect that made no
// session: the C client retries every server until it is closed and never says why it failed,
// so a refused port would cost the whole connect timeout and leave the user with no reason.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "core/url_text.hpp"

namespace deadbolt::detail {

/// What a TCP connection to one server came to.
struct Reached {
    std::string server;     // host:port
    bool accepted = false;  // a TCP connection was made (it may still not be ZooKeeper)
    std::string why;        // when not accepted: "connection refused", "no answer", ...
};

/// Tries a TCP connection to every server at once (each address its name resolves to) and
/// returns each one's outcome as soon as one accepted or all failed, or at by (those still
/// trying then read "no answer by the connect timeout"). Never throws.
std::vector<Reached> reach(const std::vector<HostPort>& servers,
                           std::chrono::steady_clock::time_point by);

}  // namespace deadbolt::detail
