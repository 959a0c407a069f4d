// The C client opens its socket and its wake-up pipe without close-on-exec, so a child that
// execs (deadbolt run's command) would keep them: a session would then outlive a dead
// deadbolt until its timeout. These mark them, from outside the C client.
#pragma once

#include <cstdint>
#include <set>
#include <vector>

namespace deadbolt::detail {

/// The descriptors open now.
std::set<int> open_descriptors();
/// Marks close-on-exec every descriptor open now that was not open in before (what the C
/// client opened at its start).
void close_new_on_exec(const std::set<int>& before);
/// Marks close-on-exec every TCP socket connected to one of ports (the C client's socket,
/// new after each reconnect).
void close_peers_on_exec(const std::vector<std::uint16_t>& ports);

}  // namespace deadbolt::detail
