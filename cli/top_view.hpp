// deadbolt top's picture, free of the terminal and the engine: what changed between two
// listings (the events scrolling under the table) and the lines of one screen.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <string>
#include <vector>

#include "deadbolt/lock_status.hpp"

namespace deadbolt::cli {

/// The order of the table's rows; `s` steps through them in this order.
enum class TopSort { name, age, waiters, ttl };

/// "name", "age", ...; the next order after s (from ttl back to name).
const char* sort_name(TopSort s);
TopSort next_sort(TopSort s);

/// Something seen to happen to a lock between two listings.
struct TopEvent {
    std::chrono::system_clock::time_point at;
    std::string what;  ///< "granted", "released" or "expired" (gone as its TTL ran out).
    std::string name;
    std::string detail;  ///< Who, and the fence or count where known.
};

/// The events that turn `before` into `now` (both as Client::list returns them), seen at `at`
/// with `interval` between the two listings. A lock that vanished with no more TTL left than
/// the interval is said to have expired (its holder stopped renewing, or lost it); one that
/// vanished earlier was released. A new holder of a held mutex (its fence or holder changed)
/// is a grant, and so is a change of kind (readers gave way to a writer); a semaphore's or
/// readers' count going up or down is said as a grant or release of that many. Listings are taken
/// to be sorted by name (Client::list sorts them).
std::vector<TopEvent> top_changes(const std::vector<ListedLock>& before,
                                  const std::vector<ListedLock>& now,
                                  std::chrono::system_clock::time_point at,
                                  std::chrono::milliseconds interval);

/// What one screen shows besides the locks.
struct TopScreen {
    std::string title;  ///< The engine and pattern, say.
    std::string error;  ///< The last listing's failure; empty when it worked.
    TopSort sort = TopSort::name;
    bool keys = false;      ///< It reads keys: the header says which.
    bool whole = false;     ///< Every lock and event, uncut, whatever rows and cols say (a pipe).
    std::size_t rows = 24;  ///< The terminal's size (0: unknown, taken as 24 x 80).
    std::size_t cols = 80;
};

/// The lines of one screen (none longer than screen.cols): a header with the counts, the
/// table sorted as asked (NAME KIND HOLDER AGE FENCE TTL WAITERS), and the latest events
/// below it, as many of each as fit in screen.rows (all with screen.whole). Control
/// characters in what the engine returned are shown as '?'.
std::vector<std::string> top_lines(const std::vector<ListedLock>& locks,
                                   const std::deque<TopEvent>& events, const TopScreen& screen,
                                   std::chrono::system_clock::time_point now);

}  // namespace deadbolt::cli
