// How many threads this process runs now (from /proc), for tests of when deadbolt starts its
// background threads.
#pragma once

#include <filesystem>

namespace deadbolt::test {

inline int threads_of_this_process() {
    int n = 0;
    for ([[maybe_unused]] const auto& t : std::filesystem::directory_iterator("/proc/self/task"))
        ++n;
    return n;
}

}  // namespace deadbolt::test
